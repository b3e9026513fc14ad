"""The view table (views.py): the fuzzer's eager forms produce the views they
name, and the op catalogues agree with the table."""

import pytest
import torch

from torch_purity import import_fx, ops
from torch_purity.views import EAGER_FORMS, VIEWS, Inverse, Writable


def _shape_for(form) -> tuple[int, ...]:
    for shape in [(4, 3), (1, 3), (3,), ()]:
        if form.applies_to(shape, True):
            return shape
    raise AssertionError(f"no test shape for {form.template}")


@pytest.mark.parametrize("form", EAGER_FORMS, ids=lambda f: f.template)
def test_each_eager_form_imports_as_the_view_it_names(form):
    shape = _shape_for(form)
    expression = form.expression(shape).format(v="x")
    namespace = {"torch": torch}
    exec(f"def program(x):\n    v = {expression}\n    v.mul_(2)\n    return x\n", namespace)
    text = str(import_fx(namespace["program"], torch.randn(shape)))
    assert f"{form.op} " in text or f"{form.op}(" in text, f"{expression} did not import as {form.op}"
    assert VIEWS[form.op].writable is Writable.ALWAYS  # the fuzzer writes through what it draws


def test_catalogues_are_the_tables():
    assert ops.UNWRITABLE_VIEWS == {name for name, view in VIEWS.items() if view.writable is not Writable.ALWAYS}
    assert {name for name, view in VIEWS.items() if view.inverse is Inverse.NONE} <= ops.UNWRITABLE_VIEWS
    assert ops.VIEW_OPS.isdisjoint(ops.MULTI_OUTPUT_VIEWS)
    for mutation, view in ops.METADATA_MUTATIONS.items():
        assert mutation in VIEWS[view].in_place_forms

"""Every in-place op the Torch dialect registers has a value-semantic variant
that purity-functionalize can substitute: registered, same argument types."""

import pytest
from torch_mlir.dialects import _torch_ops_gen

from torch_purity import ops
from torch_purity.importer import new_context

CONTEXT = new_context()
IN_PLACE = sorted(
    {
        cls.OPERATION_NAME
        for cls in vars(_torch_ops_gen).values()
        if hasattr(cls, "OPERATION_NAME") and ops.is_in_place(cls.OPERATION_NAME)
    }
)


def test_the_dialect_has_in_place_ops():
    assert len(IN_PLACE) > 100


@pytest.mark.parametrize("name", IN_PLACE)
def test_functional_variant(name):
    functional = ops.functional_variant(name, CONTEXT)
    assert functional is not None, f"{name} has no value-semantic variant"
    assert CONTEXT.is_registered_operation(functional)
    in_place_types = [str(a.type) for a in ops.aten_schema(name).arguments]
    functional_types = [str(a.type) for a in ops.aten_schema(functional).arguments]
    assert in_place_types == functional_types


def test_bernoulli_float_maps_by_argument_types():
    assert ops.functional_variant("torch.aten.bernoulli_.float", CONTEXT) == "torch.aten.bernoulli.p"

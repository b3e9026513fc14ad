"""The importer's graph rewrites (dependency workarounds before import) work
on a copy: the caller's graph, which the eager fallback may run, is left as
it was, and the rewritten graph computes eager's answer when run in eager."""

import torch
from torch.fx.experimental.proxy_tensor import make_fx

from torch_purity.importer.fx_import import _ordered_number_comparisons
from torch_purity.importer.unsigned_bytes import widened_unsigned_bytes


def _bytes_program(u, s):
    return u / 255, u.sort().values, u > -1, u // -3, u + s, u.add_(100)


def test_unsigned_bytes_rewrite_a_copy_that_computes_eagers_answer():
    u = torch.tensor([200, 3, 0, 255], dtype=torch.uint8)
    s = torch.tensor([-100, 5, 1, 2], dtype=torch.int8)
    gm = make_fx(_bytes_program, tracing_mode="fake")(u.clone(), s)
    before = gm.code
    rewritten = widened_unsigned_bytes(gm)
    assert rewritten is not gm and gm.code == before
    widened = [n for n in rewritten.graph.nodes if n.target is torch.ops.aten._to_copy.default]
    assert widened, rewritten.code
    got_input, want_input = u.clone(), u.clone()
    got, want = rewritten(got_input, s), _bytes_program(want_input, s)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and torch.equal(g, w), (g, w)
    assert torch.equal(got_input, want_input)


def test_graphs_without_unsigned_bytes_are_returned_as_they_are():
    gm = make_fx(lambda x: x.add_(3) * 2, tracing_mode="fake")(torch.ones(3, dtype=torch.int8))
    assert widened_unsigned_bytes(gm) is gm


def test_number_comparisons_rewrite_a_copy():
    def program(x):
        return x.mul(x.sum().item() > 3.0)

    gm = make_fx(program, tracing_mode="symbolic")(torch.ones(2))
    before = gm.code
    rewritten = _ordered_number_comparisons(gm)
    assert rewritten is not gm and gm.code == before
    assert "Bool.Tensor" in rewritten.code and "Bool.Tensor" not in before

"""IREE's data tiling, chosen per program (iree/data_tiling.py): on for
programs whose large matrix products outweigh the packing of the others,
off for matrix-vector products and small products; the programs compiled
either way match eager, forward and backward."""

import pytest
import torch
from product_accuracy import assert_as_close_as_eager

import torch_purity
from torch_purity.iree.data_tiling import FLAG, data_tiling_flags, gain_microseconds


def _product(a: str, b: str, out: str, op: str = "matmul") -> str:
    return f"%0 = linalg.{op} ins(%a, %b : tensor<{a}>, tensor<{b}>) outs(%c : tensor<{out}>) -> tensor<{out}>\n"


def test_large_products_gain_and_narrow_ones_cost():
    assert gain_microseconds(_product("512x512xf32", "512x512xf32", "512x512xf32")) > 1000
    assert gain_microseconds(_product("64x256xf32", "256x512xf32", "64x512xf32")) > 0
    assert gain_microseconds(_product("2048x256xf32", "256xf32", "2048xf32", "matvec")) < 0
    assert gain_microseconds(_product("1x256xf32", "256x256xf32", "1x256xf32")) < 0
    # Both sides 128, but 2.1M multiply-adds: below the size where tiling paid.
    assert gain_microseconds(_product("128x128xf32", "128x128xf32", "128x128xf32")) < 0
    # Per batch element: 4 products of 4.2M multiply-adds gain, 8 of 1M do not.
    assert gain_microseconds(_product("4x256x64xf32", "4x64x256xf32", "4x256x256xf32", "batch_matmul")) > 0
    assert gain_microseconds(_product("8x128x64xf32", "8x64x128xf32", "8x128x128xf32", "batch_matmul")) < 0


def test_transposed_operands_count_the_same_work():
    plain = _product("64x256xf32", "256x512xf32", "64x512xf32")
    transposed = (
        "%0 = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, "
        "affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] "
        "ins(%a, %b : tensor<64x256xf32>, tensor<512x256xf32>) outs(%c : tensor<64x512xf32>) -> tensor<64x512xf32>\n"
    )
    assert gain_microseconds(transposed) == pytest.approx(gain_microseconds(plain))


def test_the_whole_program_is_weighed():
    wide = _product("512x512xf32", "512x512xf32", "512x512xf32")
    narrow = _product("2048x256xf32", "256xf32", "2048xf32", "matvec")
    assert data_tiling_flags(wide + narrow, "cpu") == (FLAG,)
    assert data_tiling_flags(_product("64x256xf32", "256x512xf32", "64x512xf32") + narrow * 2, "cpu") == ()


def test_dynamic_sizes_and_other_targets_keep_the_default(monkeypatch):
    monkeypatch.delenv("PURITY_IREE_DATA_TILING", raising=False)
    assert gain_microseconds(_product("?x512xf32", "512x512xf32", "?x512xf32")) is None
    assert data_tiling_flags(_product("?x512xf32", "512x512xf32", "?x512xf32"), "cpu") == ()
    assert data_tiling_flags(_product("512x512xf32", "512x512xf32", "512x512xf32"), "cuda") == ()
    monkeypatch.setenv("PURITY_IREE_DATA_TILING", "off")
    assert data_tiling_flags(_product("512x512xf32", "512x512xf32", "512x512xf32"), "cpu") == ()
    monkeypatch.setenv("PURITY_IREE_DATA_TILING", "on")
    assert data_tiling_flags("", "cpu") == (FLAG,)


def _compiled_with(fn, *args) -> tuple[object, tuple[str, ...]]:
    compiled = torch_purity.compile(fn)
    result = compiled(*args)
    entry, _ = compiled.entry_for(*args)
    return result, entry.iree_flags


@pytest.mark.parametrize(
    ("shapes", "tiled"),
    [
        (((256, 256), (256, 512)), True),
        (((3, 128, 64), (3, 64, 128)), False),
        (((2048, 256), (256,)), False),
    ],
    ids=["large", "small batched", "matrix-vector"],
)
def test_compiled_products_match_eager(shapes, tiled, monkeypatch):
    monkeypatch.delenv("PURITY_IREE_DATA_TILING", raising=False)
    torch.manual_seed(0)
    a, b = (torch.randn(shape) for shape in shapes)
    result, flags = _compiled_with(lambda a, b: torch.relu(a @ b), a, b)
    assert (FLAG in flags) is tiled
    assert_as_close_as_eager(result, torch.relu(a @ b), torch.relu(a.double() @ b.double()))


def test_a_tiled_training_step_matches_eager(monkeypatch):
    """A linear layer large enough for tiling, trained: its forward and
    backward (whose products take transposed operands) give eager's loss
    and gradients."""
    monkeypatch.delenv("PURITY_IREE_DATA_TILING", raising=False)
    torch.manual_seed(0)
    ours, theirs = torch.nn.Linear(256, 512), torch.nn.Linear(256, 512)
    theirs.load_state_dict(ours.state_dict())
    x = torch.randn(128, 256)
    # (IREE's products, not MKL's: this product is large enough for a vendor kernel in training.)
    compiled = torch_purity.compile(ours, vendor_kernels=False)
    compiled(x).square().mean().backward()
    theirs(x).square().mean().backward()
    entry, _ = compiled.entry_for(x)
    assert entry.backward is not None and FLAG in entry.iree_flags
    exact = torch.nn.Linear(256, 512).double()
    exact.load_state_dict(theirs.state_dict())
    exact(x.double()).square().mean().backward()
    for mine, eager, reference in zip(ours.parameters(), theirs.parameters(), exact.parameters()):
        assert_as_close_as_eager(mine.grad, eager.grad, reference.grad)

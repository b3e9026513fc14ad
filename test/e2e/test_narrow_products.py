"""Tile sizes for narrow matrix products on the CPU (iree/narrow_products.py):
which products get them, that nothing else changes, and that the programs
IREE compiles with them match eager."""

import math

import pytest
import torch
from product_accuracy import assert_as_close_as_eager

import torch_purity
from torch_purity.iree.module import program_text
from torch_purity.iree.narrow_products import OFF_VARIABLE, configure_narrow_products

_MAT_MAPS = {
    "plain": "[affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, "
    "affine_map<(d0, d1, d2) -> (d0, d1)>]",
    "right transposed": "[affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, "
    "affine_map<(d0, d1, d2) -> (d0, d1)>]",
}


def _program(op: str, left: str, right: str, out: str, maps: str | None = None) -> str:
    """A function holding one product `op` of tensors typed `left`, `right` into `out`."""
    element = out.rsplit("x", 1)[-1]
    zero = "0.0" if element.startswith("f") else "0"
    dims, empty = "", f"tensor.empty() : tensor<{out}>"
    if out.startswith("?"):  # (a dynamic size: the left operand's first)
        dims = f"  %c0 = arith.constant 0 : index\n  %d0 = tensor.dim %a, %c0 : tensor<{left}>\n"
        empty = f"tensor.empty(%d0) : tensor<{out}>"
    indexing = f"indexing_maps = {maps} " if maps else ""
    return (
        f"func.func @main(%a: tensor<{left}>, %b: tensor<{right}>) -> tensor<{out}> {{\n"
        f"  %zero = arith.constant {zero} : {element}\n{dims}"
        f"  %e = {empty}\n"
        f"  %c = linalg.fill ins(%zero : {element}) outs(%e : tensor<{out}>) -> tensor<{out}>\n"
        f"  %r = linalg.{op} {indexing}ins(%a, %b : tensor<{left}>, tensor<{right}>) "
        f"outs(%c : tensor<{out}>) -> tensor<{out}>\n"
        f"  return %r : tensor<{out}>\n}}\n"
    )


def _tiles_given(text: str) -> str | None:
    """The lowering config the product was given, or None."""
    configured = configure_narrow_products(text)
    if configured == text:
        return None
    line = next(line for line in configured.splitlines() if "lowering_config<" in line)
    return line[line.index("lowering_config<") :]


@pytest.mark.parametrize(
    ("program", "distribution"),
    [
        (_program("vecmat", "2048xf32", "2048x256xf32", "256xf32"), "[256, 0]"),
        (_program("matmul", "1x2048xf32", "2048x256xf32", "1x256xf32", _MAT_MAPS["plain"]), "[1, 256, 0]"),
        (_program("matmul", "1x64xf32", "64x1000xf32", "1x1000xf32"), "[1, 64, 0]"),
        (_program("matmul", "8x300xf32", "300x130xf32", "8x130xf32"), "[8, 64, 0]"),
        (_program("batch_matmul", "4x1x64xf32", "4x64x16xf32", "4x1x16xf32"), "[1, 1, 16, 0]"),
        (_program("batch_vecmat", "4x64xf32", "4x64x16xf32", "4x16xf32"), "[1, 16, 0]"),
    ],
    ids=[
        "vecmat",
        "one-row matmul",
        "one row over 256 columns",
        "eight-row matmul",
        "one-row batch_matmul",
        "batch_vecmat",
    ],
)
def test_narrow_products_read_by_rows_get_the_tiles(program, distribution, monkeypatch):
    monkeypatch.delenv(OFF_VARIABLE, raising=False)
    config = _tiles_given(program)
    assert config is not None
    reduction = distribution.count(",") * "0, " + "1"
    assert f"distribution = {distribution}" in config
    assert f"vector_common_parallel = {distribution}" in config
    assert f"vector_reduction = [{reduction}]" in config


@pytest.mark.parametrize(
    "program",
    [
        _program("matmul", "9x300xf32", "300x130xf32", "9x130xf32"),
        _program("matmul", "1x256xf32", "512x256xf32", "1x512xf32", _MAT_MAPS["right transposed"]),
        _program("matvec", "2048x256xf32", "256xf32", "2048xf32"),
        _program("matmul", "?x256xf32", "256x64xf32", "?x64xf32"),
        _program("matmul", "1x256xi32", "256x64xi32", "1x64xi32"),
    ],
    ids=["nine rows", "right operand transposed", "matvec", "dynamic rows", "integers"],
)
def test_other_products_keep_iree_tiles(program, monkeypatch):
    monkeypatch.delenv(OFF_VARIABLE, raising=False)
    assert configure_narrow_products(program) == program


def test_only_the_cpu_target_takes_the_tiles_and_the_variable_turns_them_off(monkeypatch):
    monkeypatch.delenv(OFF_VARIABLE, raising=False)
    program = _program("vecmat", "2048xf32", "2048x256xf32", "256xf32")
    assert "compilation_info" in program_text(program, "cpu")
    assert program_text(program, "cuda") == program
    monkeypatch.setenv(OFF_VARIABLE, "off")
    assert program_text(program, "cpu") == program


def test_the_configured_text_keeps_source_locations(monkeypatch):
    """Failures name the user's line from the text's locations
    (`failing_aten_op`): configuring must not drop them."""
    monkeypatch.delenv(OFF_VARIABLE, raising=False)
    program = _program("vecmat", "2048xf32", "2048x256xf32", "256xf32").replace(
        "-> tensor<256xf32>\n  return", '-> tensor<256xf32> loc("aten.mv.default"("model.py":12:4))\n  return'
    )
    configured = configure_narrow_products(program)
    assert "compilation_info" in configured and '"aten.mv.default"' in configured and "model.py" in configured


def _decode_attention(k_cache, v_cache, q):
    scores = (k_cache @ q) / math.sqrt(q.shape[0])
    return torch.softmax(scores, dim=0) @ v_cache


@pytest.mark.parametrize(
    ("fn", "shapes"),
    [
        (torch.matmul, ((1, 2048), (2048, 256))),
        (torch.matmul, ((3, 1000), (1000, 100))),  # columns not a multiple of the tile
        (torch.matmul, ((8, 300), (300, 130))),
        (torch.matmul, ((4, 1, 64), (4, 64, 16))),  # fewer columns than the tile
        (lambda a, b: torch.relu(a @ b + 1), ((2, 512), (512, 96))),  # a consumer fused after the product
        (_decode_attention, ((2048, 64), (2048, 64), (64,))),
    ],
    ids=["one row", "three rows, 100 columns", "eight rows", "batched, 16 columns", "fused consumer", "attention"],
)
def test_compiled_narrow_products_match_eager(fn, shapes, monkeypatch):
    monkeypatch.delenv(OFF_VARIABLE, raising=False)
    torch.manual_seed(0)
    args = [torch.randn(shape) for shape in shapes]
    compiled = torch_purity.compile(fn)
    result = compiled(*args)
    entry, _ = compiled.entry_for(*args)
    assert "compilation_info" in program_text(entry.lowered.iree_input, "cpu")
    exact = fn(*(a.double() for a in args))
    assert_as_close_as_eager(result, fn(*args), exact)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16], ids=str)
def test_other_float_types_match_eager(dtype, monkeypatch):
    monkeypatch.delenv(OFF_VARIABLE, raising=False)
    torch.manual_seed(0)
    a, b = torch.randn(1, 256).to(dtype), torch.randn(256, 128).to(dtype)
    compiled = torch_purity.compile(torch.matmul)
    result = compiled(a, b)
    entry, _ = compiled.entry_for(a, b)
    assert "compilation_info" in program_text(entry.lowered.iree_input, "cpu")
    assert_as_close_as_eager(result, a @ b, a.double() @ b.double())

"""Tile sizes for the CPU code of narrow matrix products: a product whose
left operand has at most MAX_ROWS rows and whose right operand is read row by
row (`p @ v_cache` in a decode step: 1×K by K×N), IREE-WORKAROUND(narrow-product-tiles).

For these IREE's CPU code generator (3.13) picks a 16×16 vector tile of
(columns × reduction) and lowers it to shuffles: one row of `p @ v` over a
2048×256 operand took 82-87 µs in IREE's benchmark tool on this project's
Intel Xeon (AVX-512), against 33 µs in MKL on one thread. Giving the op a
tile of 64 columns and one reduction step (each step of the loop multiplies
one row of the right operand, contiguous, by one value of the left and adds
it to 64 accumulators) runs it in 35-39 µs. Measured with
`iree-benchmark-module` on this machine (2026-12-07), median of 7, µs:

| product (M×K @ K×N)  | IREE's tiles | 64 columns, 1 reduction step |
|----------------------|--------------|------------------------------|
| 1×2048 @ 2048×256    | 82-87        | 38-39                        |
| 1×4096 @ 4096×64     | 21           | 8                            |
| 1×1024 @ 1024×1000   | 195-203      | 140-142                      |
| 1×512 @ 512×4096     | 769-782      | 301-304                      |
| 4×2048 @ 2048×256    | 80-82        | 54-59                        |
| 8×2048 @ 2048×256    | 128-132      | 89-92                        |
| 8×512 @ 512×4096     | 901          | 475                          |
| 32×(1×2048 @ 2048×128), batched | 2300 | 1250                     |

Compiled for an AVX2 processor (`--iree-llvmcpu-target-cpu=haswell`, run on
the same machine) the gain holds (1×2048 @ 2048×256: 177 → 43 µs;
8×2048 @ 2048×256: 169 → 155 µs), so the tile is not tied to AVX-512's
register count. Other tiles tried (32 or 128-256 columns, 2-16 reduction
steps, 256 columns per workgroup) were as fast or slower on some shape in
that benchmark, where the operand stays in the 2 MiB L2. Inside a program
it does not: in the attention decode step of benchmarks/compare_systems.py
(two 2048×256 caches), profiled with `iree-benchmark-module
--device_profiling_mode=host-execution` and `iree-profile statistics`,
`p @ v_cache` took 85 µs per call with 64-column tiles and 70 µs with the
whole 256-column row per step (the row read in order, once); 80 µs with
128 columns; the same 70 µs compiled for haswell. So a one-row product
whose rows have at most WHOLE_ROW_COLUMNS columns takes the whole row;
wider ones keep 64 columns (1×512 @ 512×4096 in L2: 360 µs with 256-column
tiles against 301 µs), and so do products of 2-8 rows (their accumulators
are rows × columns). The whole step: 295 µs with IREE's tiles, 228 µs with
64 columns, 199 µs with whole rows (eager 134 µs, round robin in one
process).
Products whose right operand is transposed (`x @ w.t()`, a matrix-vector
product: the reduction runs along contiguous memory) keep IREE's tiles,
which are already within 1.25x of MKL there (1×256 reduction rows: 53 µs
against MKL's 43 µs for 2048 of them).

The tile is given as a `compilation_info` attribute on the product, which
IREE's CPU backend takes in place of its own choice (IREE's tuning
mechanism). Only the `cpu` target takes it; every size must be static.
`PURITY_IREE_NARROW_PRODUCT_TILES=off` leaves IREE's tiles (for measurements
and tests). This can go when IREE's own tiles for `linalg.vecmat` over
2048×256 run within 10% of these (compile the table's first product with
and without the attribute)."""

from __future__ import annotations

import os
import re

MAX_ROWS = 8
COLUMNS_PER_TILE = 64
WHOLE_ROW_COLUMNS = 256  # a one-row product's tile spans the whole row up to this width

# The indexing maps (left, right, result) of the products whose right operand
# is read row by row; the loops are ordered as the lowering config lists them.
_ROW_READ_MAPS = {
    "linalg.matmul": "[affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, "
    "affine_map<(d0, d1, d2) -> (d0, d1)>]",
    "linalg.batch_matmul": "[affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, "
    "affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]",
}
# Ops whose maps are fixed (no `indexing_maps` attribute): vecmat's right operand is always read by rows.
_FIXED_ROW_READ = ("linalg.vecmat", "linalg.batch_vecmat")
_CANDIDATE = re.compile(r"\blinalg\.(?:batch_)?(?:matmul|vecmat)\b")

OFF_VARIABLE = "PURITY_IREE_NARROW_PRODUCT_TILES"


def _enabled() -> bool:
    return os.environ.get(OFF_VARIABLE, "").lower() not in ("off", "0")


def _tiles(op_name: str, left_shape: list[int], columns: int) -> tuple[list[int], list[int], list[int]] | None:
    """(distribution, parallel vector, reduction vector) tile sizes over the
    op's loops, or None where the product is not narrow. `columns`: the
    result's row length."""
    one_row = op_name.endswith("vecmat") or left_shape[-2] == 1
    tile = columns if one_row and columns <= WHOLE_ROW_COLUMNS else COLUMNS_PER_TILE
    if op_name == "linalg.vecmat":  # loops: N, K
        return [tile, 0], [tile, 0], [0, 1]
    if op_name == "linalg.batch_vecmat":  # B, N, K
        return [1, tile, 0], [1, tile, 0], [0, 0, 1]
    rows = left_shape[-2]
    if rows > MAX_ROWS:
        return None
    if op_name == "linalg.matmul":  # M, N, K
        return [rows, tile, 0], [rows, tile, 0], [0, 0, 1]
    return [1, rows, tile, 0], [1, rows, tile, 0], [0, 0, 0, 1]  # batch_matmul: B, M, N, K


def _compilation_info(tiles: tuple[list[int], list[int], list[int]]) -> str:
    distribution, parallel, reduction = tiles
    return (
        "#iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<"
        f"distribution = {distribution}, vector_common_parallel = {parallel}, vector_reduction = {reduction}>, "
        "translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>>>"
    )


def configure_narrow_products(linalg_text: str) -> str:
    """`linalg_text` with each narrow product given its tile sizes (see the
    module's documentation); the text unchanged where there is none."""
    if not _enabled() or not _CANDIDATE.search(linalg_text):
        return linalg_text
    from iree.compiler import ir

    from ..ir_helpers.queries import walk  # (duck-typed: IREE's MLIR bindings' ops walk alike)

    with ir.Context() as context, ir.Location.unknown():
        module = ir.Module.parse(linalg_text)
        configured = 0
        for view in walk(module.operation):
            op = view.operation
            name = op.name
            if name not in _ROW_READ_MAPS and name not in _FIXED_ROW_READ:
                continue
            maps = op.attributes["indexing_maps"] if "indexing_maps" in op.attributes else None
            if name in _ROW_READ_MAPS and maps is not None and str(maps) != _ROW_READ_MAPS[name]:
                continue  # (without the attribute the maps are the default ones, read by rows)
            shapes = [operand.type for operand in op.operands]
            if not all(
                isinstance(shape, ir.RankedTensorType)
                and shape.has_static_shape
                and isinstance(shape.element_type, ir.FloatType)
                for shape in shapes
            ):
                continue
            tiles = _tiles(name, list(shapes[0].shape), shapes[2].shape[-1])
            if tiles is None:
                continue
            op.attributes["compilation_info"] = ir.Attribute.parse(_compilation_info(tiles), context)
            configured += 1
        if not configured:
            return linalg_text
        return module.operation.get_asm(enable_debug_info=True)

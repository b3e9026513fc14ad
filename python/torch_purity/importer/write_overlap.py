"""Writes whose result in eager depends on the order its kernel visits elements.

An op that writes a tensor (in place, or into `out=`) while reading another
tensor laid over the same memory in another way (`torch.mul(x, 2,
out=x.t())`, `x.add_(x[0])`, `x[1:].copy_(x[:-1])`) reads, in eager,
elements it has already overwritten, in whatever order its kernel goes:
the result is not a function of the inputs. PyTorch rejects such a write
where it can tell ("unsupported operation: some elements of the input
tensor and the written-to tensor refer to a single memory location"), but
it cannot tell for tensors that are not dense (every other column of a
matrix and its transpose) and then computes something order-dependent;
`purity fuzz` found Purity's functional answer differing from it there.
Such a write is refused with a located error: `torch_purity.compile` then
runs that op in eager (the eager fallback), on the caller's memory, which
gives eager's answer, or eager's own error where eager raises.

Left alone: reading the written tensor itself, or a view that reaches each
element from the position it is written at (the same layout, or one that
broadcasts to it), which is well defined for pointwise ops (for others,
`torch.mm(x, y, out=x)`, it is as before: computed as if the inputs were
read first); the 0-d `value` of the fill family (`x.fill_(x[0, 0])`,
`masked_fill_`, `index_fill_`), which eager reads before writing; ops that
change metadata only (`set_`, `resize_as_`); views of another element size
(`x.view(torch.uint8)`), whose layouts are counted in other units.
"""

from __future__ import annotations

from collections.abc import Iterator

import torch
import torch.fx as fx

from ..errors import PurityError
from ..layout import Layout, overlap
from .locations import op_display_name, source_of

_METADATA_ONLY = frozenset({"aten::set_", "aten::resize_as_", "aten::resize_as_sparse_"})


def refuse_order_dependent_writes(gm: fx.GraphModule) -> None:
    for node in gm.graph.nodes:
        if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
            continue
        if node.target._schema.name in _METADATA_ONLY:
            continue
        written, read = _written_and_read(node)
        for target in written:
            for source in read:
                if _reads_elements_overwritten_elsewhere(target, source):
                    raise PurityError(
                        "import",
                        "this op writes a tensor while reading memory of it laid out another way (a transpose, "
                        "a shifted or strided view), so eager's result depends on the order its kernel visits "
                        "elements (PyTorch rejects such a write where it can tell: 'some elements of the input "
                        "tensor and the written-to tensor refer to a single memory location'); clone() the input "
                        "it reads first",
                        op=op_display_name(node),
                        source=source_of(node),
                    )


def _written_and_read(node: fx.Node) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    written, read = [], []
    for index, parameter in enumerate(node.target._schema.arguments):
        value = node.args[index] if index < len(node.args) else node.kwargs.get(parameter.name)
        is_written = parameter.alias_info is not None and parameter.alias_info.is_write
        tensors = list(_tensors(value))
        if parameter.name == "value" and all(t.dim() == 0 for t in tensors):
            continue  # a fill's value, read before the write
        (written if is_written else read).extend(tensors)
    return written, read


def _tensors(value: object) -> Iterator[torch.Tensor]:
    for item in value if isinstance(value, (list, tuple)) else [value]:
        found = item.meta.get("val") if isinstance(item, fx.Node) else None
        if isinstance(found, torch.Tensor):
            yield found


def _layout(tensor: torch.Tensor) -> Layout | None:
    """Its layout in its storage; None where a size, stride or offset is symbolic."""
    numbers = (*tensor.shape, *tensor.stride(), tensor.storage_offset())
    if not all(type(n) is int for n in numbers):
        return None
    return Layout.of(tensor.shape, tensor.stride(), tensor.storage_offset())


def _reads_elements_overwritten_elsewhere(target: torch.Tensor, source: torch.Tensor) -> bool:
    try:
        if target.untyped_storage()._cdata != source.untyped_storage()._cdata:
            return False
    except (NotImplementedError, RuntimeError):  # a tensor without storage (a sparse one)
        return False
    if target.element_size() != source.element_size():
        return False  # (layouts in other units)
    written, reading = _layout(target), _layout(source)
    if written is None or reading is None or target.numel() == 0 or source.numel() == 0:
        return False
    return not _same_positions(written, reading) and overlap(written, reading)


def _same_positions(written: Layout, reading: Layout) -> bool:
    """Whether `reading`, broadcast to the written shape, reaches each element
    at the position it is written at (strides of size-1 dims do not matter)."""
    if written.offset != reading.offset or len(reading.sizes) > len(written.sizes):
        return False
    pad = len(written.sizes) - len(reading.sizes)
    sizes = (1,) * pad + reading.sizes
    strides = (0,) * pad + reading.strides
    for size, stride, read_size, read_stride in zip(written.sizes, written.strides, sizes, strides):
        if size == 1:
            continue
        if read_size == 1:
            return False  # a broadcast read: one element read at many written positions
        if read_size != size or read_stride != stride:
            return False
    return True

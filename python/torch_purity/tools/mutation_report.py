"""Human-readable lines for the mutations purity-functionalize recorded."""

from __future__ import annotations

from ..contract import MutationRecord
from ..views import VIEWS, Lowering, View


def _view_of_step(step: str) -> View | None:
    """The table entry of one step of a recorded chain, `aten.select.int(0, 1)`:
    the op name without `torch.`, then its constant arguments in parentheses."""
    return VIEWS.get("torch." + step.split("(", 1)[0].strip())


def lowering_of(kind: str, target: str, chain: str, tied: bool = True, rank0: bool = False) -> str:
    """How a recorded mutation lowers, from the view table's `lowering` of
    each step of its chain: the costliest step decides (a gather anywhere
    copies the input; a permutation anywhere is in place only if it folds).
    `rank0`: the written input is 0-d, which is never tied."""
    if kind == "metadata":
        return "metadata only: the caller's tensor is re-strided after the call, no data moves"
    if not target.startswith("argument"):
        return "on a fresh tensor: no input is affected"
    if not tied and rank0:
        return (
            "copied back: a 0-d input's final value comes back in a buffer of its own (IREE stores a 0-d result "
            "with a transfer, which the caller's memory refuses) and its one element is copied into the caller's tensor"
        )
    if not tied:
        return (
            "copied back: the input is also read where IREE could not order the read before a write "
            "into its buffer, so its final value comes back in IREE's buffer and is copied into the caller's tensor"
        )
    steps = [s for s in chain.split(" -> ") if s]
    if not steps:
        return "in place: the whole input is rewritten pointwise, as a result tied to the caller's tensor"
    views = [_view_of_step(s) for s in steps]
    # A step outside the table (or an unwritable one, which never reaches a
    # report) has no lowering: it leaves only the generic answer below.
    lowerings = {view.lowering if view is not None else None for view in views}
    if Lowering.GATHER in lowerings:
        return "copy: writes through diagonal/as_strided/unfold lower to a gather and select over the whole input"
    if Lowering.PERMUTATION in lowerings:
        return "in place only if the transposes fold: the written region is scattered back through a permutation"
    if lowerings == {Lowering.INSERT_SLICE}:
        return "in place: the written region becomes a tensor.insert_slice into the caller's tensor"
    return "scattered back through its views into the input's buffer"


def describe_mutations(
    records: list[MutationRecord],
    input_names: list[str],
    tied_inputs: set[int] | None = None,
    rank0_inputs: frozenset[int] | set[int] = frozenset(),
) -> list[str]:
    """One line per record of purity-functionalize's `purity.mutations`;
    `tied_inputs` (argument indices written in place) when known;
    `rank0_inputs`, the 0-d ones among the inputs written."""
    lines = []
    for record in records:
        shown_target, tied = record.target, True
        index = record.argument
        if index is not None:
            shown_target = input_names[index] if index < len(input_names) else record.target
            tied = tied_inputs is None or index in tied_inputs
        via = f" through {record.chain}" if record.chain else ""
        lowering = lowering_of(record.kind, record.target, record.chain, tied, index in rank0_inputs)
        lines.append(
            f"{record.op} at {record.location or 'unknown location'}: {record.kind} of {shown_target}{via}; {lowering}"
        )
    return lines


def describe_saved(forward, backward, input_names: list[str]) -> tuple[list[str], int]:
    """For a training entry (the calling conventions of its @forward and
    @backward): one line per tensor the forward keeps for the backward, and
    the bytes of those the forward computed (inputs and outputs are kept by
    reference and cost nothing extra)."""
    shapes = dict(forward.result_storage)
    lines, computed = [], 0
    for kind, index in backward.backward_arguments:
        if kind == "argument":
            name = input_names[index] if index < len(input_names) else f"argument {index}"
            lines.append(f"{name}: the caller's tensor, kept by reference")
        elif kind == "output":
            lines.append(f"output {index}: kept by reference")
        elif kind == "saved":
            result = forward.saved_results[index]
            shape, dtype = shapes.get(result, ()), forward.result_dtypes[result]
            count = 1
            for size in shape:
                count *= size
            size_bytes = count * (dtype.itemsize if dtype is not None else 1)
            computed += size_bytes
            lines.append(f"an intermediate {list(shape)} {str(dtype).removeprefix('torch.')}: {size_bytes} bytes")
    return lines, computed

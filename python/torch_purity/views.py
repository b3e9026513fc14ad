"""The table of Torch view ops: what each one is, and how a write through it is undone.

One entry per view op the importer may emit and the passes model, keyed by its
Torch-dialect name (`torch.aten.select.int`). Everything else that needs to
know about views reads this table instead of keeping its own list:

- `ops.py` derives `VIEW_OPS`, `UNWRITABLE_VIEWS`, `RESHAPE_LIKE_VIEWS`,
  `MULTI_OUTPUT_VIEWS` and `METADATA_MUTATIONS` from it;
- purity-functionalize scatters a write back through a view by the entry's
  `inverse`, rejects writes by its `writable`, and turns the elements of a
  multi-output view into single views by its `piece` and `dim_operand`;
- the mutation report says how a write through a chain of views lowers by the
  entries' `lowering`.

The module is plain data (no torch, no MLIR) so that reports and tools can
read it without loading a compiler.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType


class Inverse(StrEnum):
    """How the value of a view's base is recomputed after a write into the view."""

    SELECT_SCATTER = "select_scatter"  # select_scatter(base, new, dim, index)
    SLICE_SCATTER = "slice_scatter"  # slice_scatter(base, new, dim, start, end, step)
    NARROW = "narrow"  # slice_scatter from start to start + length, step 1
    DIAGONAL_SCATTER = "diagonal_scatter"  # diagonal_scatter(base, new, offset, dim1, dim2)
    AS_STRIDED_SCATTER = "as_strided_scatter"  # as_strided_scatter(base, new, size, stride, offset)
    # as_strided_scatter with the windows' sizes and strides in the base
    # (well defined only when the windows do not overlap: see Writable).
    UNFOLD = "unfold"
    RESHAPE_BACK = "reshape_back"  # view the new value with the base's sizes
    SELF_INVERSE = "self_inverse"  # the same op (with the same operands) undoes it
    PERMUTE_INVERSE = "permute_inverse"  # permute by the inverse permutation
    MOVEDIM_SWAPPED = "movedim_swapped"  # movedim with source and destination swapped
    IDENTITY = "identity"  # the view is the whole base: the new value is the base's
    NONE = "none"  # no inverse: a write through it is rejected (broadcasts)


class Writable(StrEnum):
    """Whether a write may go through the view."""

    ALWAYS = "always"
    # A broadcast: elements of the view share memory, so a write would store
    # several values into one element (eager raises too).
    NEVER = "never"
    # unfold: only when its step is at least its window size, so that no
    # element is in two windows (eager accepts exactly those).
    WINDOWS_APART = "windows_apart"


class Lowering(StrEnum):
    """How a write into an input through the view lowers once tied to the caller's buffer."""

    # In place: the written region is a tensor.insert_slice into the input.
    # Identity and reshape-like views move no data, so a write through them is
    # the same insert into (or overwrite of) the input.
    INSERT_SLICE = "insert_slice"
    # Scattered back through a transpose-like op: in place only when the
    # transposes fold away.
    PERMUTATION = "permutation"
    # A *_scatter over the whole input (diagonal, as_strided, unfold): a gather
    # and select, i.e. a copy of the input.
    GATHER = "gather"


@dataclass(frozen=True)
class View:
    """One view op.

    A multi-output view (`split.Tensor`, `unbind.int`, ...) returns a
    `!torch.list<tensor>`; each element is the single view `piece` of operand
    0 along operand `dim_operand`, and `inverse`/`lowering` are that piece's.
    `in_place_forms` are the metadata mutations (`t_`, `transpose_`, ...) that
    apply this view to a tensor in place."""

    name: str
    inverse: Inverse
    writable: Writable = Writable.ALWAYS
    lowering: Lowering | None = Lowering.INSERT_SLICE  # None exactly when never writable
    piece: str | None = None
    dim_operand: int | None = None
    in_place_forms: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # The fields are redundant on purpose (each reader asks its own
        # question); keep them consistent so that no reader is told a lie.
        never = self.writable is Writable.NEVER
        if never != (self.inverse is Inverse.NONE) or never != (self.lowering is None):
            raise ValueError(f"{self.name}: a view is unwritable exactly when it has no inverse and no lowering")
        if (self.piece is None) != (self.dim_operand is None):
            raise ValueError(f"{self.name}: a multi-output view needs both its piece and its dimension operand")

    @property
    def multi_output(self) -> bool:
        return self.piece is not None


_SELECT = "torch.aten.select.int"
_SLICE = "torch.aten.slice.Tensor"


def _reshape(name: str, *in_place_forms: str) -> View:
    return View(name, Inverse.RESHAPE_BACK, in_place_forms=in_place_forms)


def _transposing(name: str, inverse: Inverse, *in_place_forms: str) -> View:
    return View(name, inverse, lowering=Lowering.PERMUTATION, in_place_forms=in_place_forms)


def _broadcast(name: str) -> View:
    return View(name, Inverse.NONE, Writable.NEVER, lowering=None)


def _pieces(name: str, piece: str, dim_operand: int) -> View:
    inverse = Inverse.SELECT_SCATTER if piece == _SELECT else Inverse.SLICE_SCATTER
    return View(name, inverse, piece=piece, dim_operand=dim_operand)


def _table(*views: View) -> Mapping[str, View]:
    table: dict[str, View] = {}
    for view in views:
        if view.name in table:
            raise ValueError(f"{view.name} is in the view table twice")
        table[view.name] = view
    return MappingProxyType(table)


# Every modelled view op by its Torch-dialect name.
VIEWS: Mapping[str, View] = _table(
    # Regions of the base.
    View(_SELECT, Inverse.SELECT_SCATTER),
    View(_SLICE, Inverse.SLICE_SCATTER),
    View("torch.aten.narrow", Inverse.NARROW),
    View("torch.aten.narrow.Tensor", Inverse.NARROW),  # start is a 0-d tensor
    View("torch.aten.diagonal", Inverse.DIAGONAL_SCATTER, lowering=Lowering.GATHER),
    View(
        "torch.aten.as_strided",
        Inverse.AS_STRIDED_SCATTER,
        lowering=Lowering.GATHER,
        in_place_forms=("torch.aten.as_strided_",),
    ),
    View("torch.aten.unfold", Inverse.UNFOLD, Writable.WINDOWS_APART, lowering=Lowering.GATHER),
    # The same elements in another shape.
    _reshape("torch.aten.view"),
    _reshape("torch.aten.reshape"),
    _reshape("torch.aten._unsafe_view"),
    _reshape("torch.aten._reshape_alias"),
    _reshape("torch.aten.flatten.using_ints"),
    _reshape("torch.aten.unflatten.int"),
    _reshape("torch.aten.unsqueeze", "torch.aten.unsqueeze_"),
    _reshape("torch.aten.squeeze", "torch.aten.squeeze_"),
    _reshape("torch.aten.squeeze.dim", "torch.aten.squeeze_.dim"),
    _reshape("torch.aten.view_as"),
    _reshape("torch.prims.squeeze"),
    # The same elements in another order.
    _transposing(
        "torch.aten.transpose.int",
        Inverse.SELF_INVERSE,
        "torch.aten.transpose_",
        "torch.aten.swapdims_",
        "torch.aten.swapaxes_",
    ),
    _transposing("torch.aten.t", Inverse.SELF_INVERSE, "torch.aten.t_"),
    _transposing("torch.aten.numpy_T", Inverse.SELF_INVERSE),
    _transposing("torch.aten.permute", Inverse.PERMUTE_INVERSE),
    _transposing("torch.aten.movedim.int", Inverse.MOVEDIM_SWAPPED),
    # The whole base.
    View("torch.aten.alias", Inverse.IDENTITY),
    View("torch.aten.detach", Inverse.IDENTITY, in_place_forms=("torch.aten.detach_",)),
    View("torch.prims.view_of", Inverse.IDENTITY),
    # Broadcasts: readable, never writable.
    _broadcast("torch.aten.expand"),
    _broadcast("torch.aten.expand_as"),
    _broadcast("torch.aten.broadcast_to"),
    # Multi-output views: (self, split_size | sizes | chunks | sections, dim)
    # and unbind's (self, dim).
    _pieces("torch.aten.split.Tensor", _SLICE, 2),
    _pieces("torch.aten.split_with_sizes", _SLICE, 2),
    _pieces("torch.aten.chunk", _SLICE, 2),
    _pieces("torch.aten.tensor_split.sections", _SLICE, 2),
    _pieces("torch.aten.unbind.int", _SELECT, 1),
)


@dataclass(frozen=True)
class EagerForm:
    """A PyTorch expression that imports as view `op` (a key of VIEWS), as
    the fuzzer draws it: `{v}` is the viewed variable; `{last}` (size of dim 0
    minus 1), `{n}` (size of dim 0), `{narrow}` (max(1, n - 1)) and `{last1}`
    (size of dim 1 minus 1) are filled in from the tensor's shape."""

    op: str
    template: str
    min_rank: int = 0
    min_leading: int = 0  # smallest size of dim 0
    only_leading: int | None = None  # the one size of dim 0 it applies to
    contiguous: bool = False  # only on contiguous tensors (`view`)

    def applies_to(self, shape: tuple[int, ...], contiguous: bool) -> bool:
        if len(shape) < self.min_rank or (self.contiguous and not contiguous):
            return False
        leading = shape[0] if shape else None
        if self.min_leading and (leading is None or leading < self.min_leading):
            return False
        return self.only_leading is None or leading == self.only_leading

    def expression(self, shape: tuple[int, ...]) -> str:
        n = shape[0] if shape else 1
        last1 = shape[1] - 1 if len(shape) > 1 else 0
        return self.template.format(v="{v}", last=n - 1, n=n, narrow=max(1, n - 1), last1=last1)


# The views the fuzzer draws, in the order it draws from (the order keeps
# fixed-seed runs drawing the same programs).
EAGER_FORMS: tuple[EagerForm, ...] = (
    EagerForm("torch.aten.detach", "{v}.detach()"),
    EagerForm("torch.aten.view", "{v}.view(-1)", contiguous=True),
    EagerForm(_SELECT, "{v}[{last}]", min_rank=1),
    EagerForm("torch.aten.unsqueeze", "{v}.unsqueeze(0)"),
    EagerForm(_SLICE, "{v}[0:{n}:2]", min_rank=1),
    EagerForm(_SLICE, "{v}.narrow(0, 0, {narrow})", min_rank=1),  # make_fx records narrow as a slice
    EagerForm("torch.aten.split.Tensor", "{v}.split(1)[1]", min_rank=1, min_leading=2),
    EagerForm("torch.aten.unbind.int", "{v}.unbind(0)[0]", min_rank=1, min_leading=2),
    EagerForm("torch.aten.split.Tensor", "{v}.chunk(2)[-1]", min_rank=1, min_leading=2),  # recorded as split
    EagerForm("torch.aten.t", "{v}.t()", min_rank=2),
    EagerForm("torch.aten.transpose.int", "{v}.transpose(0, 1)", min_rank=2),
    EagerForm("torch.aten.diagonal", "{v}.diagonal()", min_rank=2),
    EagerForm(_SELECT, "{v}[:, {last1}]", min_rank=2),
    EagerForm("torch.aten.permute", "{v}.permute(1, 0)", min_rank=2),
    EagerForm("torch.aten.squeeze.dim", "{v}.squeeze(0)", min_rank=1, only_leading=1),
)
for _form in EAGER_FORMS:
    if _form.op not in VIEWS:
        raise ValueError(f"the fuzzer's form {_form.template!r} names {_form.op}, which is not in the view table")

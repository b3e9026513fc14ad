"""purity-verify-contract: checks that a stage's output keeps the IR contract the next stage relies on.

Runs at the end of every stage of the pipeline (`pipeline.STAGES`), and from
purity-opt as `--purity-verify-contract=stage=NAME`. Each violation is an
error at the op or function it concerns, naming the stage; the pass then
fails, so a pass that breaks the contract is caught where it ran, not by a
wrong answer later. What each stage promises (docs/architecture.md):

- `functional-torch`: no op in a body produces `!torch.tensor` (or a list of
  them), no in-place op, metadata mutation or `torch.copy.to_tensor` is left,
  functions return value tensors; every `!torch.tensor` argument (a written
  one) is overwritten exactly once (`torch.overwrite.tensor.contents`) and
  otherwise only read through `torch.copy.to_vtensor`; at most one result
  carries `purity.index_checks`, a `[N],i1` tensor with N the checks' flag
  count; a result viewing an input or an intermediate has its view layout.
- `value-boundary-torch`, `torch-backend`, `linalg`: no `!torch.tensor`
  anywhere and no overwrite left; `purity.result_element_types` names one
  element type per result; each `purity.written_input` names an argument
  (at most one result per argument); each `iree.abi.output` names a result
  that is that argument's final value (or, in `iree-abi`, its storage).
- `linalg`, `iree-abi`: the function's boundary has builtin tensor types.
- `iree-abi`: every result an argument does not alias is stored in exactly
  one argument (`iree.abi.output`); a `purity.result_storage` argument's
  type is its result's; a `purity.unwritten` argument is not tied.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property

from torch_mlir.ir import FunctionType, Location, Operation

from .. import contract
from ..contract.ir import contract_attrs
from ..ir_helpers.functions import function_ops, function_type
from ..ir_helpers.queries import aten_name, walk
from ..ir_helpers.torch_values import static_sizes
from ..ops import METADATA_MUTATIONS, is_in_place
from .base import LocatedPassError, ModulePass, PassOptionError

Violation = tuple[Location, str]


class _Function:
    """A function and its contract attributes, read once for all of a stage's checks."""

    def __init__(self, op: Operation) -> None:
        self.op = op

    @property
    def location(self) -> Location:
        return self.op.location

    @cached_property
    def type(self) -> FunctionType:
        return function_type(self.op)

    @cached_property
    def arg_attrs(self) -> list[dict[str, object]]:
        return contract_attrs(self.op, "arg_attrs")

    @cached_property
    def result_attrs(self) -> list[dict[str, object]]:
        return contract_attrs(self.op, "res_attrs")


@dataclass(frozen=True)
class VerifyContract(ModulePass):
    """Checks the IR contract a stage's output promises (stage=functional-torch|value-boundary-torch|...|iree-abi)."""

    name = "purity-verify-contract"

    stage: str = ""

    def __post_init__(self) -> None:
        if self.stage not in _CHECKS:
            raise PassOptionError(
                f"pass '{self.name}' needs stage=NAME, one of {', '.join(_CHECKS)} (got '{self.stage}')"
            )

    def apply(self, module: Operation) -> None:
        functions = [_Function(function) for function in function_ops(module)]
        violations = [v for function in functions for check in _CHECKS[self.stage] for v in check(function)]

        def report(violation: Violation) -> None:
            raise LocatedPassError(violation[0], f"{self.stage} contract: {violation[1]}")

        self.for_each(violations, report)


def _is_non_value_type(text: str) -> bool:
    return text.startswith("!torch.tensor") or text.startswith("!torch.list<tensor")


def _body_ops(function: _Function) -> Iterator[Operation]:
    for op in walk(function.op):
        yield op.operation


def _no_mutation_in_bodies(function: _Function) -> Iterator[Violation]:
    for op in _body_ops(function):
        name = aten_name(op)
        if is_in_place(name) or name in METADATA_MUTATIONS or name == "torch.copy.to_tensor":
            yield op.location, f"'{name}' mutates or makes a non-value tensor"
        elif any(_is_non_value_type(str(r.type)) for r in op.results):
            yield op.location, f"'{name}' produces a non-value tensor"


def _value_results(function: _Function) -> Iterator[Violation]:
    for index, result_type in enumerate(function.type.results):
        if _is_non_value_type(str(result_type)):
            yield function.location, f"result {index} is a non-value tensor"


def _written_arguments_overwritten_once(function: _Function) -> Iterator[Violation]:
    block = function.op.regions[0].blocks[0]
    for argument in block.arguments:
        if not _is_non_value_type(str(argument.type)):
            continue
        overwrites = 0
        for use in argument.uses:
            user = use.owner
            if user.name == "torch.overwrite.tensor.contents" and use.operand_number == 1:
                overwrites += 1
            elif user.name != "torch.copy.to_vtensor":
                yield (
                    user.location,
                    f"'{user.name}' uses written argument {argument.arg_number}, "
                    "which only reads and one overwrite may",
                )
        if overwrites != 1:
            yield (
                function.location,
                f"written argument {argument.arg_number} is overwritten {overwrites} times, not once",
            )


def _index_checks(function: _Function) -> Iterator[Violation]:
    results = function.type.results
    found = [(i, attrs) for i, attrs in enumerate(function.result_attrs) if contract.INDEX_CHECKS in attrs]
    if len(found) > 1:
        yield function.location, f"{len(found)} results carry {contract.INDEX_CHECKS}, not at most one"
    for index, attrs in found:
        count = sum(check["count"] for check in attrs[contract.INDEX_CHECKS])
        text = str(results[index])
        if not text.endswith(",i1>") or static_sizes(results[index]) != [count]:
            yield function.location, f"the index checks' result {index} is {text}, not [{count}] flags of i1"


def _view_layouts(function: _Function) -> Iterator[Violation]:
    for index, attrs in enumerate(function.result_attrs):
        if contract.ALIASES_INPUT in attrs and contract.VIEW_SIZES not in attrs:
            yield function.location, f"result {index} views an input but has no {contract.VIEW_SIZES}"


def _no_non_value_tensors(function: _Function) -> Iterator[Violation]:
    kind = function.type
    for position, types in (("argument", kind.inputs), ("result", kind.results)):
        for index, type_ in enumerate(types):
            if _is_non_value_type(str(type_)):
                yield function.location, f"{position} {index} is a non-value tensor ({type_})"
    for op in _body_ops(function):
        if op.name == "torch.overwrite.tensor.contents" or any(_is_non_value_type(str(r.type)) for r in op.results):
            yield op.location, f"'{op.name}' is left after the edge was exposed"


def _boundary_attributes(function: _Function) -> Iterator[Violation]:
    kind = function.type
    result_count = len(kind.results)
    result_attrs = function.result_attrs
    types = (
        function.op.attributes[contract.RESULT_ELEMENT_TYPES]
        if contract.RESULT_ELEMENT_TYPES in function.op.attributes
        else None
    )
    if types is None or len(list(types)) != result_count:
        yield (
            function.location,
            f"{contract.RESULT_ELEMENT_TYPES} must name one element type per result ({result_count})",
        )
    written: dict[int, int] = {}
    for index, attrs in enumerate(result_attrs):
        if contract.WRITTEN_INPUT not in attrs:
            continue
        argument = attrs[contract.WRITTEN_INPUT]
        if not 0 <= argument < len(kind.inputs):
            yield function.location, f"result {index} is the final value of argument {argument}, which does not exist"
        elif argument in written:
            yield (
                function.location,
                f"argument {argument} has two final values (results {written[argument]} and {index})",
            )
        else:
            written[argument] = index
    for index, attrs in enumerate(function.arg_attrs):
        if contract.IREE_OUTPUT not in attrs:
            continue
        result = attrs[contract.IREE_OUTPUT]
        stored = attrs.get(contract.RESULT_STORAGE)
        if not 0 <= result < result_count:
            yield function.location, f"argument {index} is tied to result {result}, which does not exist"
        elif written.get(index) != result and stored != result:
            yield (
                function.location,
                f"argument {index} is tied to result {result}, which is neither its final value nor stored in it",
            )
        elif str(kind.inputs[index]) != str(kind.results[result]):
            yield function.location, f"argument {index} and its tied result {result} differ in type"


def _builtin_boundary(function: _Function) -> Iterator[Violation]:
    kind = function.type
    torch_types = [t for t in [*kind.inputs, *kind.results] if str(t).startswith("!torch.")]
    if torch_types:
        yield function.location, f"the boundary still has Torch type {torch_types[0]}"


def _every_result_stored(function: _Function) -> Iterator[Violation]:
    result_attrs = function.result_attrs
    tied_to: dict[int, list[int]] = {}
    for index, attrs in enumerate(function.arg_attrs):
        if contract.IREE_OUTPUT in attrs:
            tied_to.setdefault(attrs[contract.IREE_OUTPUT], []).append(index)
            if contract.UNWRITTEN in attrs:
                yield function.location, f"argument {index} is tied to a result but marked {contract.UNWRITTEN}"
    for index, attrs in enumerate(result_attrs):
        if contract.ALIASES_INPUT in attrs:
            continue  # handed out as a view of the caller's input, never read
        arguments = tied_to.get(index, [])
        if len(arguments) != 1:
            yield function.location, f"result {index} is stored in {len(arguments)} arguments, not one"


_CHECKS: dict[str, tuple[Callable[[_Function], Iterator[Violation]], ...]] = {
    "functional-torch": (
        _no_mutation_in_bodies, _value_results, _written_arguments_overwritten_once, _index_checks, _view_layouts,
    ),
    "value-boundary-torch": (_no_non_value_tensors, _boundary_attributes, _index_checks, _view_layouts),
    "torch-backend": (_no_non_value_tensors, _boundary_attributes),
    "linalg": (_builtin_boundary, _boundary_attributes),
    "iree-abi": (_builtin_boundary, _boundary_attributes, _every_result_stored),
}  # fmt: skip

"""Typed readers and writers of the contract's attributes on MLIR ops, and
`read_calling_convention`: the runtime's calling convention from the last
stage's IR alone (iree-abi), whose attributes carry every earlier stage's
facts the runtime needs."""

from __future__ import annotations

from torch_mlir import ir

from ..errors import PurityError
from ..ir_helpers.functions import arg_attr, dict_entries, function_type, i64_attr, main_function, result_attr
from ..ir_helpers.types import element_type_text
from . import (
    ALIAS_BASE,
    ALIAS_GROUP,
    ALIASES_INPUT,
    ATTRIBUTE_PREFIXES,
    GRADIENT_OF,
    INDEX_CHECKS,
    IREE_OUTPUT,
    MUTATIONS,
    NEW_SIZES,
    NEW_STORAGE_OFFSET,
    NEW_STRIDES,
    RESULT_ELEMENT_TYPES,
    RESULT_STORAGE,
    RNG_SEED,
    SAVED,
    SAVED_ARGUMENT,
    SAVED_OUTPUT,
    SIZES,
    STORAGE_OFFSET,
    STRIDES,
    SYNTHETIC_BASE_OF,
    TANGENT,
    TORCH_DTYPES,
    UNWRITTEN,
    VIEW_RETURNED_AS_COPY,
    VIEW_SIZES,
    VIEW_STORAGE_OFFSET,
    VIEW_STRIDES,
    WRITTEN_INPUT,
    CallingConvention,
    IndexCheck,
    Layout,
    MutationRecord,
)

# Argument/result attribute triples holding a Layout.
INPUT_LAYOUT = (SIZES, STRIDES, STORAGE_OFFSET)
NEW_LAYOUT = (NEW_SIZES, NEW_STRIDES, NEW_STORAGE_OFFSET)
VIEW_LAYOUT = (VIEW_SIZES, VIEW_STRIDES, VIEW_STORAGE_OFFSET)


def layout_attrs(layout: Layout, names: tuple[str, str, str]) -> dict[str, ir.Attribute]:
    sizes, strides, offset = names
    return {
        sizes: ir.DenseI64ArrayAttr.get(list(layout.sizes)),
        strides: ir.DenseI64ArrayAttr.get(list(layout.strides)),
        offset: i64_attr(layout.offset),
    }


def input_layout(function: ir.Operation, index: int) -> Layout | None:
    """An argument's layout in its storage as the importer recorded it, or None."""
    sizes, strides, offset = (arg_attr(function, index, name) for name in INPUT_LAYOUT)
    if sizes is None:
        return None
    return Layout.of(ir.DenseI64ArrayAttr(sizes), ir.DenseI64ArrayAttr(strides), ir.IntegerAttr(offset).value)


def mutations_attr(records: list[MutationRecord]) -> ir.ArrayAttr:
    return ir.ArrayAttr.get([_record_attr(record.to_json()) for record in records])


def read_mutations(function: ir.Operation) -> list[MutationRecord]:
    if MUTATIONS not in function.attributes:
        return []
    return [MutationRecord.from_json(_python_value(d)) for d in ir.ArrayAttr(function.attributes[MUTATIONS])]


def index_checks_attr(checks: list[IndexCheck]) -> ir.ArrayAttr:
    return ir.ArrayAttr.get([_record_attr(check.to_json()) for check in checks])


def element_types_attr(types: list[ir.Type]) -> ir.ArrayAttr:
    """The Torch element type of each result (`si64`, `f32`, ...)."""
    return ir.ArrayAttr.get([ir.StringAttr.get(element_type_text(t)) for t in types])


def tied_result(function: ir.Operation, argument: int) -> int | None:
    """The result IREE stores in the argument's buffer (`iree.abi.output`), or None."""
    attr = arg_attr(function, argument, IREE_OUTPUT)
    return None if attr is None else ir.IntegerAttr(attr).value


def tie_attr(result: int) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IndexType.get(), result)


def written_input(function: ir.Operation, result: int) -> int | None:
    """The argument whose final value the result is (`purity.written_input`), or None."""
    attr = result_attr(function, result, WRITTEN_INPUT)
    return None if attr is None else ir.IntegerAttr(attr).value


def _record_attr(fields: dict[str, str | int]) -> ir.DictAttr:
    """A record's JSON fields as a dictionary attribute (strings, i64s); `_python_value` reads it back."""
    return ir.DictAttr.get({k: ir.StringAttr.get(v) if isinstance(v, str) else i64_attr(v) for k, v in fields.items()})


def contract_attrs(function: ir.Operation, key: str) -> list[dict[str, object]]:
    """The contract's attributes of each argument (`arg_attrs`) or result
    (`res_attrs`), as Python values, one dict per position."""
    count = len(function_type(function).inputs if key == "arg_attrs" else function_type(function).results)
    found = list(ir.ArrayAttr(function.attributes[key])) if key in function.attributes else []
    dicts = [
        {name: _python_value(attr) for name, attr in dict_entries(d).items() if name.startswith(ATTRIBUTE_PREFIXES)}
        for d in found
    ]
    return dicts + [{} for _ in range(count - len(dicts))]


def _python_value(attr: ir.Attribute) -> object:
    for kind, convert in (
        (ir.DictAttr, lambda a: {name: _python_value(v) for name, v in dict_entries(a).items()}),
        (ir.ArrayAttr, lambda a: [_python_value(element) for element in a]),
        (ir.DenseI64ArrayAttr, tuple),
        (ir.UnitAttr, lambda a: True),
        (ir.IntegerAttr, lambda a: a.value),
        (ir.StringAttr, lambda a: a.value),
    ):
        try:
            typed = kind(attr)
        except (ValueError, TypeError):
            continue
        return convert(typed)
    return str(attr)


def _layout(attrs: dict[str, object], names: tuple[str, str, str]) -> Layout:
    sizes, strides, offset = names
    return Layout(tuple(attrs[sizes]), tuple(attrs[strides]), attrs[offset])


def read_calling_convention(module: ir.Module, name: str = "main") -> CallingConvention:
    """The calling convention of the iree-abi stage's `main` (or of a training
    program's `forward` or `backward`)."""
    function = main_function(module, name)
    element_types = _python_value(function.attributes[RESULT_ELEMENT_TYPES])
    convention = CallingConvention(
        [], {}, [], {}, [TORCH_DTYPES.get(t) for t in element_types], mutations=read_mutations(function)
    )
    _read_results(contract_attrs(function, "res_attrs"), convention)
    _read_arguments(contract_attrs(function, "arg_attrs"), function_type(function).inputs, convention)
    # Results handed out as views of inputs are never read: any element type
    # will do there. Every other result crosses into a torch tensor.
    views = {convention.output_results[output] for output in convention.output_views}
    unknown = sorted({t for i, t in enumerate(element_types) if t not in TORCH_DTYPES and i not in views})
    if unknown:
        raise PurityError("compile", f"results of element type {', '.join(unknown)} are not supported")
    return convention


def _read_results(result_attrs: list[dict[str, object]], convention: CallingConvention) -> None:
    group_bases: dict[int, int] = {}  # alias group -> result index of the intermediate its outputs view
    group_members: list[tuple[int, int, Layout]] = []
    for index, attrs in enumerate(result_attrs):
        if WRITTEN_INPUT in attrs:
            convention.written_inputs.append((index, attrs[WRITTEN_INPUT]))
        elif INDEX_CHECKS in attrs:
            checks = tuple(IndexCheck.from_json(c) for c in attrs[INDEX_CHECKS])
            convention.index_checks = (index, checks)
        elif ALIAS_BASE in attrs:
            group_bases[attrs[ALIAS_BASE]] = index
        elif SAVED in attrs:
            convention.saved_results[attrs[SAVED]] = index
        else:
            output = len(convention.output_results)
            convention.output_results.append(index)
            if GRADIENT_OF in attrs:
                convention.gradient_of.append(attrs[GRADIENT_OF])
            if VIEW_RETURNED_AS_COPY in attrs:
                convention.views_returned_as_copies[output] = attrs[VIEW_RETURNED_AS_COPY]
            if VIEW_SIZES in attrs and ALIASES_INPUT in attrs:
                convention.output_views[output] = (attrs[ALIASES_INPUT], _layout(attrs, VIEW_LAYOUT))
            elif VIEW_SIZES in attrs and ALIAS_GROUP in attrs:
                group_members.append((output, attrs[ALIAS_GROUP], _layout(attrs, VIEW_LAYOUT)))
    for output, group, view in group_members:
        if group in group_bases:
            convention.output_bases[output] = (group_bases[group], view)


def _read_arguments(arg_attrs: list[dict[str, object]], types: list[ir.Type], convention: CallingConvention) -> None:
    def shape(index: int) -> tuple[int, ...]:
        return tuple(ir.RankedTensorType(types[index]).shape)

    for index, attrs in enumerate(arg_attrs):
        if IREE_OUTPUT in attrs and RESULT_STORAGE not in attrs:
            convention.tied_inputs.add(index)
        if SYNTHETIC_BASE_OF in attrs:
            convention.synthetic_bases.append((attrs[SYNTHETIC_BASE_OF], shape(index)[0]))
        if NEW_SIZES in attrs:
            convention.metadata_mutations[index] = _layout(attrs, NEW_LAYOUT)
        if UNWRITTEN in attrs:
            convention.unwritten_inputs.add(index)
        if RESULT_STORAGE in attrs:
            convention.result_storage.append((attrs[RESULT_STORAGE], shape(index)))
        if RNG_SEED in attrs:
            convention.rng_seed_input = index
    if any(TANGENT in attrs for attrs in arg_attrs):
        convention.backward_arguments = [_backward_argument(index, attrs) for index, attrs in enumerate(arg_attrs)]
        convention.backward_arguments = [a for a in convention.backward_arguments if a is not None]


def _backward_argument(index: int, attrs: dict[str, object]) -> tuple[str, int] | None:
    """Where the runtime finds a backward argument (None: one the runtime adds, storage or seed)."""
    for name, kind in ((SAVED_ARGUMENT, "argument"), (SAVED_OUTPUT, "output"), (TANGENT, "tangent")):
        if name in attrs:
            return (kind, attrs[name])
    if RESULT_STORAGE in attrs or RNG_SEED in attrs:
        return None
    return ("saved", index)

"""purity-seed-from-argument: the random ops' seed comes from the caller, not from state in the module.

Runs on linalg-on-tensors. torch-mlir lowers each random op (`uniform`, so
`rand`, `bernoulli`, `dropout`, `normal` ...) to a counter-based generator
keyed by `torch_c.get_next_seed`, which it turns into a module global
`@global_seed` (initial value 0) that each op loads, advances and stores.
Compiled as is, every program starts from the same seed: `torch.manual_seed`
changes nothing and two compiled programs draw the same values.

This pass makes the seed an argument of each function that uses the global:
a `tensor<i64>` appended to the arguments, marked `purity.rng_seed`. The
first load reads it; each later load reads what the store before it wrote
(the chain of seeds within one call is as before); the stores and the
global go. The runtime passes a seed drawn from torch's default generator
on every call (`iree.runtime`), so `torch.manual_seed` reproduces a compiled
program's values, different seeds give different values, and each call
advances torch's generator, as inductor's seed-and-offset scheme does.

A load or store of the seed that is not in the function's entry block (in
a loop or branch region) is refused with a located error: the chain could
not be followed there.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch_mlir.ir import (
    FlatSymbolRefAttr,
    FunctionType,
    IntegerType,
    Location,
    Operation,
    RankedTensorType,
    TypeAttr,
    UnitAttr,
)

from ... import contract
from ...ir_helpers.functions import function_ops, set_arg_attrs
from ...passes.base import LocatedPassError, ModulePass

_LOAD, _STORE = "ml_program.global_load", "ml_program.global_store"


@dataclass(frozen=True)
class SeedFromArgument(ModulePass):
    """Replaces torch-mlir's module-global RNG seed by a `purity.rng_seed` argument the caller passes per call."""

    name = "purity-seed-from-argument"

    def apply(self, module: Operation) -> None:
        globals_by_name = {
            op.attributes["sym_name"].value: op
            for op in module.regions[0].blocks[0].operations
            if op.name == "ml_program.global"
        }
        seeds = {name: op for name, op in globals_by_name.items() if _is_seed(op)}
        if not seeds:
            return

        def thread_seeds(function: Operation) -> None:
            for name in seeds:
                _thread_seed(function, name)

        self.for_each(function_ops(module), thread_seeds)
        for op in seeds.values():
            if not _symbol_used(module, op):
                op.erase()


def _is_seed(op: Operation) -> bool:
    kind = op.attributes["type"] if "type" in op.attributes else None
    text = str(kind.value) if kind is not None else ""
    return op.attributes["sym_name"].value == "global_seed" and text == "tensor<i64>"


def _accesses(function: Operation, name: str) -> list[Operation]:
    found: list[Operation] = []

    def visit(op: Operation) -> None:
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    if inner.name in (_LOAD, _STORE) and FlatSymbolRefAttr(inner.attributes["global"]).value == name:
                        found.append(inner)
                    visit(inner)

    visit(function)
    return found


def _thread_seed(function: Operation, name: str) -> None:
    accesses = _accesses(function, name)
    if not accesses:
        return
    entry = function.regions[0].blocks[0]
    for op in accesses:
        if op.operation.block != entry:
            raise LocatedPassError(
                op.location,
                f"the random-number seed @{name} is used inside a region; Purity passes the seed as an argument "
                "and follows it through the function's entry block only",
            )
    context = function.context
    with Location.unknown(context):
        seed_type = RankedTensorType.get([], IntegerType.get_signless(64, context))
    seed = entry.add_argument(seed_type, Location.unknown(context))
    function_type = FunctionType(TypeAttr(function.attributes["function_type"]).value)
    function.attributes["function_type"] = TypeAttr.get(
        FunctionType.get([a.type for a in entry.arguments], function_type.results, context=context)
    )
    set_arg_attrs(function, seed.arg_number, {contract.RNG_SEED: UnitAttr.get(context)})
    current = seed
    for op in accesses:  # in program order: one block
        if op.name == _LOAD:
            op.results[0].replace_all_uses_with(current)
        else:
            current = op.operands[0]
        op.erase()


def _symbol_used(module: Operation, op: Operation) -> bool:
    name = op.attributes["sym_name"].value
    return any(_accesses(function, name) for function in function_ops(module))

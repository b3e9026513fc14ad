"""The joint graph of a training program: its forward, then autograd's
backward, traced to ATen as one function.

When grad mode is on and a tensor the program reads (an argument, a
parameter, captured state) requires grad, the driver traces
`joint(primals, tangents) -> (outputs, gradients)`: the program, then
`torch.autograd.grad` of its outputs that require grad with respect to the
primals that do, with the tangents as incoming gradients. The trace is
make_fx without functionalization, as for inference, so the forward's
in-place ops and input writes (running statistics, `relu_`, a written
buffer) stay in the graph and Purity's passes remove them. The imported
function's tangent arguments carry `purity.tangent` and its gradient results
`purity.gradient_of`, which purity-partition-joint splits on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch_mlir import ir

from .. import contract
from ..importer.fx_import import InputDescription, trace_output_metadata
from ..ir_helpers.functions import i64_attr, main_function, set_arg_attrs, set_result_attrs


@dataclass
class JointPlan:
    """What the joint trace takes and returns."""

    primal_count: int
    differentiable_outputs: list[int]  # flat outputs that require grad: each gets a tangent
    grad_inputs: list[int]  # primals that require grad
    tangents: list[torch.Tensor]  # example incoming gradients, in differentiable_outputs order
    output_count: int
    # Primals requiring grad that share storage with another primal: traced as
    # leaves of their own (same storage, no autograd link), so the gradient
    # through one is not counted again through the other; at run time autograd
    # joins them through the caller's own views, as in eager.
    detached: frozenset[int] = frozenset()
    produced: list[int] = field(default_factory=list)  # the grad_inputs the trace found a gradient for

    def function(self, forward: Callable[..., tuple]) -> Callable[..., tuple]:
        def joint(*values: torch.Tensor) -> tuple:
            primals, tangents = list(values[: self.primal_count]), values[self.primal_count :]
            for index in self.detached:
                primals[index] = primals[index].detach().requires_grad_()
            # Attention as its math (matmuls, softmax) above autograd: the
            # fused CPU kernels' backward ops have no decomposition to lower.
            with sdpa_kernel([SDPBackend.MATH]):
                outputs = forward(*primals)
            gradients = torch.autograd.grad(
                [outputs[i] for i in self.differentiable_outputs],
                [primals[i] for i in self.grad_inputs],
                tangents,
                allow_unused=True,
            )
            self.produced[:] = [i for i, g in zip(self.grad_inputs, gradients) if g is not None]
            return (*outputs, *(g for g in gradients if g is not None))

        return joint


def plan_joint(forward: Callable[..., tuple], primals: Sequence[torch.Tensor], user_code: object) -> JointPlan | None:
    """The joint trace's plan, or None when autograd has nothing to record
    (no primal requires grad, or no output does: eager's outputs would not
    require grad either)."""
    grad_inputs = [i for i, t in enumerate(primals) if t.requires_grad]
    if not grad_inputs:
        return None
    outputs = trace_output_metadata(forward, primals, user_code)
    differentiable = [i for i, o in enumerate(outputs) if o.requires_grad]
    if not differentiable:
        return None
    tangents = [torch.zeros(outputs[i].shape, dtype=outputs[i].dtype, device=outputs[i].device) for i in differentiable]
    storages = [t.untyped_storage().data_ptr() for t in primals]
    shared = {i for i in grad_inputs if storages.count(storages[i]) > 1}
    return JointPlan(len(primals), differentiable, grad_inputs, tangents, len(outputs), frozenset(shared))


def name_tangents(inputs: list[InputDescription], plan: JointPlan) -> list[InputDescription]:
    """The traced graph's inputs with its tangents (the last ones) named after their outputs."""
    first = len(inputs) - len(plan.tangents)
    named = [InputDescription(f"tangent:{j}", d.value) for j, d in zip(plan.differentiable_outputs, inputs[first:])]
    return [*inputs[:first], *named]


def mark_joint(
    module: ir.Module,
    plan: JointPlan,
    inputs: list[InputDescription],
    primals: Sequence[torch.Tensor],
    first_captured: int,
):
    """Marks the imported joint function for purity-partition-joint: each
    tangent argument with the output it belongs to, each gradient result
    with the argument it is the gradient of (arguments keep their places;
    captured tensors, distinct objects, are found among those the trace
    kept)."""
    function = main_function(module)
    first_tangent = len(inputs) - len(plan.tangents)
    position = {i: i for i in range(first_captured)}
    kept = {id(d.value): first_captured + k for k, d in enumerate(inputs[first_captured:first_tangent])}
    position |= {i: kept[id(t)] for i, t in enumerate(primals) if i >= first_captured and id(t) in kept}
    with module.context:
        for offset, output in enumerate(plan.differentiable_outputs):
            set_arg_attrs(function, first_tangent + offset, {contract.TANGENT: i64_attr(output)})
        for offset, primal in enumerate(plan.produced):
            argument = position[primal]
            set_result_attrs(function, plan.output_count + offset, {contract.GRADIENT_OF: i64_attr(argument)})

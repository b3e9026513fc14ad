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
    produced: list[int] = field(default_factory=list)  # the grad_inputs the trace found a gradient for

    def function(self, forward: Callable[..., tuple]) -> Callable[..., tuple]:
        def joint(*values: torch.Tensor) -> tuple:
            primals, tangents = values[: self.primal_count], values[self.primal_count :]
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
    return JointPlan(len(primals), differentiable, grad_inputs, tangents, len(outputs))


def name_tangents(inputs: list[InputDescription], plan: JointPlan) -> list[InputDescription]:
    """The traced graph's inputs with its tangents (the last ones) named after their outputs."""
    first = len(inputs) - len(plan.tangents)
    named = [InputDescription(f"tangent:{j}", d.value) for j, d in zip(plan.differentiable_outputs, inputs[first:])]
    return [*inputs[:first], *named]


def mark_joint(module: ir.Module, plan: JointPlan, inputs: list[InputDescription], primals: Sequence[torch.Tensor]):
    """Marks the imported joint function for purity-partition-joint: each
    tangent argument with the output it belongs to, each gradient result
    with the argument (after unused captured inputs were dropped) it is the
    gradient of."""
    function = main_function(module)
    first_tangent = len(inputs) - len(plan.tangents)
    position = {id(d.value): index for index, d in enumerate(inputs[:first_tangent])}
    with module.context:
        for offset, output in enumerate(plan.differentiable_outputs):
            set_arg_attrs(function, first_tangent + offset, {contract.TANGENT: i64_attr(output)})
        for offset, primal in enumerate(plan.produced):
            argument = position[id(primals[primal])]
            set_result_attrs(function, plan.output_count + offset, {contract.GRADIENT_OF: i64_attr(argument)})

"""A training program at run time: its compiled `@forward` and `@backward`
(purity-partition-joint) joined by a `torch.autograd.Function`.

The forward runs like any compiled program (input writes applied to the
caller's tensors, outputs that view inputs returned as views) and keeps what
the backward's arguments name: forward arguments (the caller's tensors, by
reference), program outputs, and saved results, through
`ctx.save_for_backward`, so autograd's own checks apply (a saved tensor
written in place before `backward()` fails as in eager; `retain_graph`
keeps them for a second backward). Outputs without a tangent are marked
non-differentiable. The backward runs the compiled `@backward` on those and
the incoming gradients, and returns each input's gradient (None where the
joint graph had none, as eager leaves `.grad` unset). Double backward
(`create_graph=True`) is refused: the compiled backward is not
differentiable.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ..errors import PurityError
from .runtime import Executable


def run_training(forward: Executable, backward: Executable, args: Sequence[object]):
    """Calls the compiled forward on `args` (the flat leaves) under autograd."""
    tensors = [args[i] for i in forward.argument_positions]
    outputs = _CompiledJoint.apply(forward, backward, *tensors)
    return forward._rebuild_outputs(list(outputs))


class _CompiledJoint(torch.autograd.Function):
    @staticmethod
    def forward(ctx, forward: Executable, backward: Executable, *tensors: torch.Tensor):
        arguments = forward._arguments(tensors)
        results, outputs = forward.execute(arguments)
        saved = []
        for kind, index in backward.convention.backward_arguments:
            if kind == "argument":
                saved.append(arguments[index])
            elif kind == "output":
                saved.append(outputs[index])
            elif kind == "saved":
                saved.append(results[forward.convention.saved_results[index]])
        ctx.save_for_backward(*saved)
        ctx.backward_executable = backward
        ctx.inputs = len(tensors)
        ctx.output_templates = [(o.shape, o.dtype, o.device) for o in outputs]
        differentiable = {index for kind, index in backward.convention.backward_arguments if kind == "tangent"}
        plain = [o for i, o in enumerate(outputs) if i not in differentiable]
        if plain:
            ctx.mark_non_differentiable(*plain)
        return tuple(outputs)

    @staticmethod
    def backward(ctx, *output_gradients):
        if torch.is_grad_enabled():
            raise PurityError(
                "backward",
                "a double backward (create_graph=True) through a program compiled by Purity is not supported: "
                "its compiled backward is not differentiable",
            )
        backward = ctx.backward_executable
        saved = iter(ctx.saved_tensors)
        arguments = []
        for kind, index in backward.convention.backward_arguments:
            if kind != "tangent":
                arguments.append(next(saved))
                continue
            gradient = output_gradients[index]
            if gradient is None:
                shape, dtype, device = ctx.output_templates[index]
                gradient = torch.zeros(shape, dtype=dtype, device=device)
            arguments.append(gradient.contiguous())
        _, gradients = backward.execute(backward._arguments(arguments))
        by_input: list[torch.Tensor | None] = [None] * ctx.inputs
        for gradient, input_index in zip(gradients, backward.convention.gradient_of):
            by_input[input_index] = gradient
        return (None, None, *by_input)

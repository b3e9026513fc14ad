"""A compiled model's training state against an eager copy's, step by step:
the loss, every parameter and gradient, every buffer (BatchNorm's running
statistics). Tolerances cover fp32 reordering only."""

from __future__ import annotations

import torch

ATOL, RTOL = 1e-5, 1e-4


def assert_close(ours: torch.Tensor, eager: torch.Tensor, what: str, atol: float = ATOL) -> None:
    torch.testing.assert_close(ours, eager, atol=atol, rtol=RTOL, msg=lambda m: f"{what}: {m}")


def assert_same_state(
    model: torch.nn.Module, reference: torch.nn.Module, step: int, gradients_by_largest: bool = False
) -> None:
    """Parameters, gradients and buffers as the eager `reference`'s. With
    `gradients_by_largest`, a gradient's absolute tolerance scales with its
    largest element (large gradients summed in another order: a deep model's
    through convolutions in another library)."""
    for (name, ours), (_, eager) in zip(model.named_parameters(), reference.named_parameters(), strict=True):
        assert_close(ours, eager, f"step {step}: parameter {name}")
        assert (ours.grad is None) == (eager.grad is None), f"step {step}: {name}.grad presence"
        if eager.grad is not None:
            atol = ATOL * max(1.0, float(eager.grad.abs().max())) if gradients_by_largest else ATOL
            assert_close(ours.grad, eager.grad, f"step {step}: gradient of {name}", atol=atol)
    for (name, ours), (_, eager) in zip(model.named_buffers(), reference.named_buffers(), strict=True):
        assert_close(ours, eager, f"step {step}: buffer {name}")

"""How close a compiled matrix product must come to eager's."""

import torch


def assert_as_close_as_eager(ours: torch.Tensor, eager: torch.Tensor, exact: torch.Tensor) -> None:
    """Sums of hundreds of products in another order differ from eager's
    (MKL's) by more than float32's default tolerance: both are held to the
    float64 result instead, ours no further from it than 4x eager's error."""
    assert ours.shape == eager.shape and ours.dtype == eager.dtype
    ours_error = (ours.double() - exact).abs().max().item()
    eager_error = (eager.double() - exact).abs().max().item()
    assert ours_error <= 4 * eager_error + 1e-6, (ours_error, eager_error)

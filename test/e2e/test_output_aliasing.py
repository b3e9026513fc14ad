"""Outputs that view one intermediate are views of one storage, as in eager:
a write through one shows in the others."""

import torch

import torch_purity


def row_and_rest(x):
    out = x.clone()
    return out[0], out[1:]


def test_a_write_to_one_output_shows_in_the_other():
    x = torch.randn(3, 2)
    first, rest = torch_purity.compile(row_and_rest)(x)
    eager_first, eager_rest = row_and_rest(x)
    first.mul_(3)
    eager_first.mul_(3)
    rest[0].add_(first)
    eager_rest[0].add_(eager_first)
    assert first.untyped_storage().data_ptr() == rest.untyped_storage().data_ptr()
    torch.testing.assert_close(rest, eager_rest)
    torch.testing.assert_close(first, eager_first)

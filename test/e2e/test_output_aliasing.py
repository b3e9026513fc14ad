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


def sum_twice(p):
    s = p.sum()
    return s, s


def doubled_twice_and_input(p):
    y = p * 2
    return y, y, p


def test_one_tensor_returned_twice_is_one_object_on_every_call():
    """`return s, s` gives eager's one object at both places (a write through
    one shows through the other), on the first call and on later ones."""
    compiled = torch_purity.compile(sum_twice)
    x = torch.randn(4, 4)
    for _ in range(3):
        first, second = compiled(x)
        eager_first, eager_second = sum_twice(x)
        assert first is second and eager_first is eager_second
        first.add_(1)
        eager_first.add_(1)
        torch.testing.assert_close(second, eager_second)


def test_a_repeated_output_beside_others_keeps_their_places():
    compiled = torch_purity.compile(doubled_twice_and_input)
    x = torch.randn(3)
    first, second, third = compiled(x)
    assert first is second and third is not first
    torch.testing.assert_close(first, x * 2)
    torch.testing.assert_close(third, x)


def test_a_repeated_output_in_training_carries_one_gradient():
    """Returned twice under autograd, the one tensor's gradient is the sum of
    what flows through both places, as in eager."""
    w = torch.randn(3, requires_grad=True)
    w_eager = w.detach().clone().requires_grad_()
    first, second = torch_purity.compile(lambda w: (w * 2,) * 2)(w)
    assert first is second
    (first * 3 + second).sum().backward()
    eager_first, eager_second = (w_eager * 2,) * 2
    (eager_first * 3 + eager_second).sum().backward()
    torch.testing.assert_close(w.grad, w_eager.grad)


def test_a_saved_program_returns_a_repeated_output_as_one_object(tmp_path):
    compiled = torch_purity.compile(sum_twice)
    x = torch.randn(4)
    compiled(x)
    compiled.save(tmp_path / "saved")
    first, second = torch_purity.load(tmp_path / "saved")(x)
    assert first is second
    torch.testing.assert_close(first, x.sum())

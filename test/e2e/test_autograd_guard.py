"""Autograd is never dropped: on every entry point, wherever eager's outputs
require grad the compiled ones do too, and a backward through them gives
eager's gradients (a training entry); a program that writes an input
requiring grad is refused before it runs."""

import pytest
import torch

import torch_purity
from torch_purity import PurityError


def make_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))


@pytest.mark.parametrize("entry", ["torch_purity.compile", "torch.compile"])
def test_regularized_loss_gets_the_models_gradient(entry):
    """The reported case: `model(x).sum() + 1e-3 * sum(p^2)` ran and every
    gradient silently equalled 2e-3 * p."""
    torch._dynamo.reset()
    model, x = make_model(), torch.randn(8, 4)
    compiled = (
        torch_purity.compile(model) if entry == "torch_purity.compile" else torch.compile(model, backend="purity")
    )
    out = compiled(x)
    assert out.requires_grad and model(x).requires_grad
    torch.testing.assert_close(out.detach(), model(x).detach())
    loss = out.sum() + 1e-3 * sum(p.square().sum() for p in model.parameters())
    loss.backward()
    ours = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    (model(x).sum() + 1e-3 * sum(p.square().sum() for p in model.parameters())).backward()
    for mine, eager in zip(ours, (p.grad for p in model.parameters())):
        torch.testing.assert_close(mine, eager, atol=1e-5, rtol=1e-4)
    with torch.no_grad():
        assert not compiled(x).requires_grad


def _paths():
    """(name, compiled callable, eager callable, arguments) per way of reaching Purity."""
    torch.manual_seed(1)
    model = make_model()
    weight = torch.nn.Parameter(torch.randn(4, 4))

    def closes_over_a_parameter(x):
        return x @ weight

    def takes_keywords(x, *, w):
        return (x * w).sum(0), x.argmax()

    x = torch.randn(8, 4)
    w = torch.randn(4, requires_grad=True)
    return [
        ("module", torch_purity.compile(model), model, (x,), {}),
        ("torch.compile module", torch.compile(model, backend="purity"), model, (x,), {}),
        ("closure", torch_purity.compile(closes_over_a_parameter), closes_over_a_parameter, (x,), {}),
        ("keywords", torch_purity.compile(takes_keywords), takes_keywords, (x,), {"w": w}),
        ("requires-grad input", torch_purity.compile(lambda a: a.exp()), lambda a: a.exp(), (w,), {}),
    ]


def test_no_path_returns_detached_outputs_where_eager_would_not():
    torch._dynamo.reset()
    for name, compiled, eager, args, kwargs in _paths():
        ours = compiled(*args, **kwargs)
        expected = eager(*args, **kwargs)
        ours = ours if isinstance(ours, tuple) else (ours,)
        expected = expected if isinstance(expected, tuple) else (expected,)
        for index, (a, b) in enumerate(zip(ours, expected)):
            assert a.requires_grad == b.requires_grad, f"{name}: output {index}"
            if b.requires_grad:
                assert a.grad_fn is not None, f"{name}: output {index} has no grad_fn"


def views_and_values(x):
    return x[1], x * 2


def test_outputs_that_view_inputs_and_computed_outputs_both_differentiate():
    x = torch.randn(3, 4, requires_grad=True)
    view, doubled = torch_purity.compile(views_and_values)(x)
    (view.sum() + doubled.sum()).backward()
    expected = torch.full((3, 4), 2.0).index_fill_(0, torch.tensor([1]), 3.0)
    torch.testing.assert_close(x.grad, expected)


def scale_in_place(x):
    x.mul_(2)
    return x.sum()


def test_writing_an_input_that_requires_grad_is_refused_before_running():
    x = torch.randn(4).requires_grad_().clone()  # not a leaf: eager would record the write
    before = x.detach().clone()
    compiled = torch_purity.compile(scale_in_place)
    with pytest.raises(PurityError, match="writes input:0 in place, which requires grad"):
        compiled(x)
    assert torch.equal(x.detach(), before)
    with torch.no_grad():
        compiled(x)
    assert torch.equal(x.detach(), before * 2)

"""Purity compiles no gradients yet: where eager's outputs would require
grad, the compiled outputs do too, and a backward through what IREE computed
raises a PurityError instead of giving a silently wrong gradient; a program
that writes an input requiring grad is refused before it runs."""

import pytest
import torch

import torch_purity
from torch_purity import PurityError


def make_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))


@pytest.mark.parametrize("entry", ["torch_purity.compile", "torch.compile"])
def test_regularized_loss_raises_instead_of_dropping_the_model_gradient(entry):
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
    with pytest.raises(PurityError, match="gradients through a program compiled by Purity are not supported"):
        loss.backward()
    with torch.no_grad():
        assert not compiled(x).requires_grad


def views_and_values(x):
    return x[1], x * 2


def test_outputs_that_view_inputs_keep_exact_gradients():
    x = torch.randn(3, 4, requires_grad=True)
    view, doubled = torch_purity.compile(views_and_values)(x)
    view.sum().backward()
    assert torch.equal(x.grad, torch.zeros(3, 4).index_fill_(0, torch.tensor([1]), 1.0))
    with pytest.raises(PurityError):
        doubled.sum().backward()


def scale_in_place(x):
    x.mul_(2)
    return x.sum()


def test_writing_an_input_that_requires_grad_is_refused_before_running():
    x = torch.randn(4).requires_grad_().clone()  # not a leaf: eager would record the write
    before = x.detach().clone()
    compiled = torch_purity.compile(scale_in_place)
    with pytest.raises(PurityError, match="requires grad and the program writes it in place"):
        compiled(x)
    assert torch.equal(x.detach(), before)
    with torch.no_grad():
        compiled(x)
    assert torch.equal(x.detach(), before * 2)

"""The call path's shortcut for a call that repeats the last one's signature.

`SignatureRepeat` stands in for `input_signature` (and the grad key) on
calls with many tensors: whenever it says a call repeats the last one, the
signature and the grad key must be equal to the last call's, or the cache
would hand over an entry compiled for other layouts or other aliasing. Each
case changes one thing about a set of leaves and checks the shortcut's
answer against the signature's own, then against the expected answer (so
a shortcut that always says no fails too). The end-to-end cases run an
optimizer-like step and check it against eager while layouts and aliasing
change between calls.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

import torch_purity
from torch_purity.checking import clone_preserving_aliasing
from torch_purity.iree.runtime import SignatureRepeat, input_signature

TENSORS = 10


def distinct_leaves() -> list[object]:
    """An optimizer step's leaves: distinct tensors, each starting its storage, and two scalars."""
    return [*(torch.randn(4, 6) for _ in range(TENSORS)), 0.1, 3]


def aliased_leaves() -> list[object]:
    """Leaves where two tensors view one storage (one at an offset) and one tensor comes twice."""
    base = torch.randn(8, 6)
    shared = torch.randn(4, 6)
    return [base[:4], base[4:], shared, shared, *(torch.randn(4, 6) for _ in range(TENSORS - 4)), 0.1, 3]


def key(leaves: list[object]) -> tuple:
    requiring_grad: list[int] = []
    return input_signature(leaves, requiring_grad=requiring_grad), tuple(requiring_grad)


def replaced(position: int, value: Callable[[list[object]], object]) -> Callable[[list[object]], list[object]]:
    def change(leaves: list[object]) -> list[object]:
        changed = list(leaves)
        changed[position] = value(leaves)
        return changed

    return change


def fresh_copies(leaves: list[object]) -> list[object]:
    return clone_preserving_aliasing(leaves)


def resized(leaves: list[object]) -> list[object]:
    changed = fresh_copies(leaves)
    changed[2].resize_(2, 6)
    return changed


def restrided(leaves: list[object]) -> list[object]:
    changed = fresh_copies(leaves)
    changed[2].as_strided_((4, 6), (1, 4))
    return changed


def rebound_to_another_storage(leaves: list[object]) -> list[object]:
    changed = fresh_copies(leaves)
    changed[5].set_(changed[6].untyped_storage(), 0, (4, 6), (6, 1))
    return changed


def requires_grad(leaves: list[object]) -> list[object]:
    changed = fresh_copies(leaves)
    changed[1].requires_grad_()
    return changed


def at_an_offset(leaves: list[object]) -> list[object]:
    return replaced(7, lambda _: torch.randn(5, 6)[1:])(leaves)


CHANGES: dict[str, tuple[Callable[[list[object]], list[object]], bool]] = {
    # name: (change, whether the signature stays the same)
    "unchanged": (list, True),
    "fresh tensors of the same layouts": (fresh_copies, True),
    "another int value (checked by the entry's guard)": (replaced(-1, lambda _: 4), True),
    "another float value": (replaced(-2, lambda _: 0.2), False),
    "another dtype": (replaced(0, lambda leaves: leaves[0].double()), False),
    "another shape": (replaced(0, lambda _: torch.randn(6, 4)), False),
    "a transposed tensor": (replaced(0, lambda _: torch.randn(6, 4).t()), False),
    "resize_": (resized, False),
    "as_strided_": (restrided, False),
    "set_ onto another leaf's storage": (rebound_to_another_storage, False),
    "requires_grad": (requires_grad, False),
    "the same object twice": (replaced(9, lambda leaves: leaves[8]), False),
    "a view of another leaf": (replaced(9, lambda leaves: leaves[8].view(4, 6)), False),
    "a view at an offset": (at_an_offset, False),
    "a tensor turned into a float": (replaced(4, lambda _: 0.5), False),
    "a leaf fewer": (lambda leaves: leaves[:-1], False),
}


@pytest.mark.parametrize("make_leaves", [distinct_leaves, aliased_leaves], ids=["distinct", "aliased"])
@pytest.mark.parametrize("change", list(CHANGES), ids=list(CHANGES))
def test_a_repeat_holds_exactly_when_the_signature_is_the_same(make_leaves, change) -> None:
    leaves = make_leaves()
    repeat = SignatureRepeat.of(leaves)
    assert repeat is not None
    changed = CHANGES[change][0](leaves)
    same_signature = key(changed) == key(leaves)
    assert repeat.holds(changed) == same_signature, f"{change}: the shortcut disagrees with input_signature"
    if make_leaves is distinct_leaves:
        assert same_signature == CHANGES[change][1], f"{change}: the case no longer tests what it names"


def test_fresh_tensors_that_drop_the_aliasing_are_not_a_repeat() -> None:
    leaves = aliased_leaves()
    repeat = SignatureRepeat.of(leaves)
    apart = [torch.randn(4, 6) if isinstance(leaf, torch.Tensor) else leaf for leaf in leaves]
    assert key(apart) != key(leaves)
    assert not repeat.holds(apart)


def test_leaves_without_tensors_take_the_signature_walk() -> None:
    assert SignatureRepeat.of([1, 0.5]) is None


def kv_write_leaves() -> list[object]:
    """A one-row KV write's leaves: a cache, a row and an int position."""
    return [torch.zeros(16, 4), torch.randn(4), 3]


SMALL_CHANGES: dict[str, tuple[Callable[[list[object]], list[object]], bool]] = {
    "unchanged": (list, True),
    "another position": (replaced(2, lambda _: 5), True),
    "a fresh row": (replaced(1, lambda _: torch.randn(4)), True),
    "a row of another length": (replaced(1, lambda _: torch.randn(5)), False),
    "the row as a view into the cache": (replaced(1, lambda leaves: leaves[0][2]), False),
    "the cache twice": (replaced(1, lambda leaves: leaves[0]), False),
    "a row with the negative bit": (replaced(1, lambda _: torch._neg_view(torch.randn(4))), False),
}


@pytest.mark.parametrize("change", list(SMALL_CHANGES), ids=list(SMALL_CHANGES))
def test_a_repeat_of_a_small_call_holds_exactly_when_the_signature_is_the_same(change) -> None:
    leaves = kv_write_leaves()
    repeat = SignatureRepeat.of(leaves)
    assert repeat is not None
    changed = SMALL_CHANGES[change][0](leaves)
    expected = SMALL_CHANGES[change][1]
    if change != "a row with the negative bit":  # (the signature does not hold dispatch keys)
        assert (key(changed) == key(leaves)) == expected, f"{change}: the case no longer tests what it names"
    assert repeat.holds(changed) == expected, change


def test_a_repeat_of_one_tensor_checks_that_tensor() -> None:
    repeat = SignatureRepeat.of([torch.randn(3), 2])
    assert repeat.holds([torch.randn(3), 7])
    assert not repeat.holds([torch.randn(4), 7])
    assert not repeat.holds([torch.randn(3).double(), 7])


def sgd_step(params, grads, buffers, lr: float):
    for p, g, b in zip(params, grads, buffers):
        b.mul_(0.9).add_(g)
        p.add_(b, alpha=-lr)


def step_inputs(count: int = 6) -> tuple[list[torch.Tensor], list[torch.Tensor], list[torch.Tensor]]:
    return (
        [torch.randn(16, 8) for _ in range(count)],
        [torch.randn(16, 8) for _ in range(count)],
        [torch.zeros(16, 8) for _ in range(count)],
    )


def run_both(compiled, params, grads, buffers, lr: float = 0.1) -> None:
    """One step compiled and one eager on copies; outputs and every input must match."""
    expected = clone_preserving_aliasing([params, grads, buffers])
    sgd_step(*expected, lr)
    compiled(params, grads, buffers, lr)
    for got, want in zip((params, grads, buffers), expected):
        for g, w in zip(got, want):
            torch.testing.assert_close(g, w, atol=1e-6, rtol=1e-5)


def test_repeated_steps_take_the_shortcut_and_match_eager() -> None:
    compiled = torch_purity.compile(sgd_step)
    params, grads, buffers = step_inputs()
    run_both(compiled, params, grads, buffers)
    run_both(compiled, params, grads, buffers)  # the first cache hit records the call
    taken = []
    found = compiled._repeated_call
    compiled._repeated_call = lambda *a: taken.append(found(*a)) or taken[-1]
    for _ in range(3):
        grads = [torch.randn(16, 8) for _ in grads]  # fresh gradients each step, as backward makes them
        run_both(compiled, params, grads, buffers)
    assert taken and all(result is not None for result in taken), "repeated calls did not take the shortcut"
    assert len(compiled.cache) == 1


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda p, g, b: g.__setitem__(1, g[0]), id="a gradient passed twice"),
        pytest.param(lambda p, g, b: g.__setitem__(2, torch.randn(8, 16).t()), id="a transposed gradient"),
        pytest.param(lambda p, g, b: b.__setitem__(3, p[3]), id="a buffer that is its parameter"),
        pytest.param(lambda p, g, b: g[4].resize_(1, 8), id="a gradient resized to broadcast"),
    ],
)
def test_a_changed_layout_or_aliasing_after_repeats_still_matches_eager(change) -> None:
    compiled = torch_purity.compile(sgd_step)
    params, grads, buffers = step_inputs()
    for _ in range(3):
        run_both(compiled, params, grads, buffers)
    assert compiled._last_call is not None
    entry = compiled._last_call.entry
    change(params, grads, buffers)
    run_both(compiled, params, grads, buffers)
    assert compiled._last_call is None or compiled._last_call.entry is not entry, "the old entry served the change"
    assert len(compiled.cache) == 2

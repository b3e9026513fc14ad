"""A CPU program that falls into independent parts (an optimizer step over
many parameters) runs them at once on torch's intra-op threads
(purity-split-independent-parts, iree/parallel_parts.py): the same writes
and results as eager, call after call, with one thread or two, and where a
piece reads what another writes the program stays whole."""

from __future__ import annotations

import random
import threading

import pytest
import torch

import torch_purity
from torch_purity.iree import parallel_parts
from torch_purity.iree.parallel_parts import PartsInvoker, openmp_runtime

# 12 parameters of 256×256: 2.4M elements of updates, past the pass's threshold.
COUNT, SIDE = 12, 256


def rmsprop(params, grads, squares, lr: float, alpha: float):
    for p, g, v in zip(params, grads, squares):
        v.mul_(alpha).addcmul_(g, g, value=1 - alpha)
        p.addcdiv_(g, v.sqrt().add_(1e-8), value=-lr)
    return params[0].sum()


def _tensors(groups: int, seed: int) -> list[list[torch.Tensor]]:
    generator = torch.Generator().manual_seed(seed)
    return [[torch.randn(SIDE, SIDE, generator=generator) for _ in range(COUNT)] for _ in range(groups)]


def _parts_invoker(compiled) -> PartsInvoker:
    (entry,) = compiled.cache.values()
    assert callable(entry._plan), "the entry does not take the steady call plan"
    invoker = entry.module.vm_invoke
    assert isinstance(invoker, PartsInvoker), "the program was not split into parts"
    return invoker


def _rmsprop_taking_the_plan(seed: int):
    """A compiled RMSprop step called twice (its next call takes the steady plan), and its tensors."""
    compiled = torch_purity.compile(rmsprop)
    tensors = _tensors(3, seed=seed)
    tensors[2] = [t.abs() for t in tensors[2]]
    for _ in range(2):
        compiled(*tensors, 0.01, 0.9)
    return compiled, tensors


def _plan_invoker(compiled) -> PartsInvoker:
    """The invoker the entry's steady plan calls (`vm_invoke` makes a new one each time it is read)."""
    (entry,) = compiled.cache.values()
    invoker = entry._plan.__closure__[entry._plan.__code__.co_freevars.index("vm_invoke")].cell_contents
    assert isinstance(invoker, PartsInvoker)
    return invoker


def test_torchs_openmp_runtime_is_found() -> None:
    assert openmp_runtime() is not None, "no loaded OpenMP runtime exports GOMP_parallel_start and _end"


@pytest.mark.parametrize("threads", [2, 3])
def test_a_program_has_one_part_per_thread_of_torch(threads: int) -> None:
    """Each thread takes one part, taking the GIL once after it (not between
    parts): the program is split into as many parts as torch has threads
    when it is compiled."""
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        compiled, _ = _rmsprop_taking_the_plan(seed=7)
    finally:
        torch.set_num_threads(previous)
    assert len(_parts_invoker(compiled)._parts) == threads


def test_the_calling_thread_takes_a_part_itself() -> None:
    """The caller invokes its part directly, never through the team's
    callback (which would make it wait for the GIL a worker may hold); a
    worker's callback takes what is left."""
    compiled, tensors = _rmsprop_taking_the_plan(seed=8)
    invoker = _plan_invoker(compiled)
    callbacks, invoked = [], []  # (thread,) per callback entered; (thread, part) per part invoked
    run_parts, take_parts = invoker._run_parts, invoker._take_parts

    def recording_run(token):
        callbacks.append(threading.get_ident())
        run_parts(token)

    def recording_take(context, arguments, taken, errors):
        thread = threading.get_ident()

        def recorded():
            for index in taken:
                if index < len(invoker._parts):
                    invoked.append((thread, index))
                yield index

        take_parts(context, arguments, recorded(), errors)

    invoker._run_parts, invoker._take_parts = recording_run, recording_take
    invoker._callback = parallel_parts._CALLBACK(recording_run)
    compiled(*tensors, 0.01, 0.9)
    caller = threading.get_ident()
    assert callbacks and caller not in callbacks, callbacks  # a worker entered the team's callback; the caller not
    assert any(thread == caller for thread, _ in invoked), invoked  # the caller invoked a part itself
    assert sorted(part for _, part in invoked) == list(range(len(invoker._parts)))  # each part once


@pytest.mark.parametrize("threads", [2, 1])
def test_rmsprop_in_parts_writes_like_eager(threads: int) -> None:
    ours, theirs = _tensors(3, seed=1), _tensors(3, seed=1)
    for group in (ours, theirs):
        group[2] = [t.abs() for t in group[2]]
    compiled = torch_purity.compile(rmsprop)
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        for call in range(4):
            grads = _tensors(1, seed=10 + call)[0]
            got = compiled(ours[0], grads, ours[2], 0.01, 0.9)
            want = rmsprop(theirs[0], [g.clone() for g in grads], theirs[2], 0.01, 0.9)
            torch.testing.assert_close(got, want)
            for got_group, want_group in zip((ours[0], ours[2]), (theirs[0], theirs[2])):
                for got_tensor, want_tensor in zip(got_group, want_group, strict=True):
                    torch.testing.assert_close(got_tensor, want_tensor)
    finally:
        torch.set_num_threads(previous)
    assert len(_parts_invoker(compiled)._parts) >= 2


@pytest.mark.parametrize("foreach", [False, True])
def test_a_compiled_adam_step_in_parts_writes_like_eager_and_moves_versions(foreach: bool) -> None:
    """`torch.optim.Adam` stepped through torch.compile: the graph captures
    the parameters (which require grad) and returns None, and under no_grad
    the step still takes the steady plan, with its parts."""
    from dynamo_recording import recording_purity_backend

    torch.manual_seed(2)
    ours = [torch.nn.Parameter(torch.randn(SIDE, SIDE)) for _ in range(COUNT)]
    theirs = [torch.nn.Parameter(p.detach().clone()) for p in ours]
    for mine, other in zip(ours, theirs, strict=True):
        mine.grad = torch.randn(SIDE, SIDE)
        other.grad = mine.grad.clone()
    optimizer = torch.optim.Adam(ours, lr=1e-2, foreach=foreach)
    reference = torch.optim.Adam(theirs, lr=1e-2, foreach=foreach)
    backend, programs = recording_purity_backend()
    step = torch.compile(optimizer.step, backend=backend)
    for call in range(4):
        versions = [p._version for p in ours]
        with torch.no_grad():
            step()
        reference.step()
        for mine, other in zip(ours, theirs, strict=True):
            torch.testing.assert_close(mine.detach(), other.detach())
        if call >= 2:  # (the plan, with the parts, from the third call)
            assert all(p._version > v for p, v in zip(ours, versions, strict=True))
    (program,) = [p for p in programs if p.cache]
    _parts_invoker(program)


def test_parts_write_what_the_whole_program_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bit for bit: the same dispatches, run by parts or in one invocation
    (where no OpenMP runtime is found)."""
    in_parts, whole = _tensors(3, seed=3), _tensors(3, seed=3)
    for group in (in_parts, whole):
        group[2] = [t.abs() for t in group[2]]
    compiled = torch_purity.compile(rmsprop)
    for _ in range(3):
        compiled(in_parts[0], in_parts[1], in_parts[2], 0.01, 0.9)
    _parts_invoker(compiled)
    asked = []
    monkeypatch.setattr(parallel_parts, "openmp_runtime", lambda: asked.append(1))  # (returns None)
    for _ in range(3):
        compiled(whole[0], whole[1], whole[2], 0.01, 0.9)
    assert asked, "the parts' invoker was not asked"
    for got_group, want_group in zip(in_parts, whole, strict=True):
        for got_tensor, want_tensor in zip(got_group, want_group, strict=True):
            assert torch.equal(got_tensor, want_tensor)


def test_updates_reading_each_others_parameters_stay_whole() -> None:
    """Each update reads the next parameter before that one is written: the
    pieces join into one and the program is not split."""

    def chained(params):
        for p, q in zip(params, params[1:]):
            p.add_(q, alpha=0.5)
        params[-1].mul_(2)

    ours, theirs = _tensors(1, seed=4)[0], _tensors(1, seed=4)[0]
    compiled = torch_purity.compile(chained)
    for _ in range(3):
        compiled(ours)
        chained(theirs)
    for got_tensor, want_tensor in zip(ours, theirs, strict=True):
        torch.testing.assert_close(got_tensor, want_tensor)
    (entry,) = compiled.cache.values()
    assert not isinstance(entry.module.vm_invoke, PartsInvoker)


def _random_updates(seed: int, count: int):
    """Updates of `count` tensors where some read others (a copy, an add of
    another tensor): the pieces the pass finds depend on which read which."""
    rng = random.Random(seed)
    kinds, scales = ["own", "own", "read", "copy"], [0.5, -1.25]
    steps = [
        (rng.choice(kinds), rng.randrange(count), rng.randrange(count), rng.choice(scales))
        for _ in range(rng.randint(count, 2 * count))
    ]

    def program(tensors):
        for kind, i, j, scale in steps:
            if kind == "own":
                tensors[i].mul_(scale).add_(1.0)
            elif kind == "read":
                tensors[i].add_(tensors[j], alpha=scale)
            else:
                tensors[i].copy_(tensors[j] * scale)
        return tensors[0].sum()

    return program


def test_random_updates_reading_one_another_match_eager() -> None:
    """Random programs (30 of them matched eager, 26 split, when the pass
    was written; the suite runs four)."""
    split = 0
    for seed in range(4):
        program = _random_updates(seed, count=10)
        generator = torch.Generator().manual_seed(seed)
        ours = [torch.randn(512, 512, generator=generator) for _ in range(10)]
        theirs = [t.clone() for t in ours]
        compiled = torch_purity.compile(program)
        for _ in range(3):
            torch.testing.assert_close(compiled(ours), program(theirs), rtol=1e-4, atol=1e-2)
            for got, want in zip(ours, theirs, strict=True):
                torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-3)
        (entry,) = compiled.cache.values()
        split += isinstance(entry.module.vm_invoke, PartsInvoker)
    assert split >= 2, f"only {split} of 4 random programs were split"


def test_the_other_threads_contexts_are_made_before_any_part_runs() -> None:
    """Making a VM context runs the module's initializer on the device: it is
    done on the calling thread before the parts start, never on a worker
    while another thread runs a part (a compiled foreach Adam step failed
    once in the benchmark with IREE's "ref type mismatch" that way)."""
    compiled, tensors = _rmsprop_taking_the_plan(seed=6)
    invoker = _plan_invoker(compiled)
    made_on, make = [], invoker._new_context

    def recording():
        made_on.append(threading.get_ident())
        return make()

    invoker._new_context = recording
    compiled(*tensors, 0.01, 0.9)
    assert made_on and set(made_on) == {threading.get_ident()}, made_on

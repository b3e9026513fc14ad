"""The targets Purity compiles for: one entry per target, everything a target
needs (IREE's compile flags and runtime driver, the torch device it runs
on). A new target is one entry in `TARGETS`.

Needs nothing but the standard library: the runtime, saved programs, the
torch.compile backend and the tools all read it."""

from __future__ import annotations

import os
from dataclasses import dataclass

# Flags every target takes. IREE-WORKAROUND(f64-demotion): IREE demotes f64
# to f32 by default; eager computes in f64. IREE-WORKAROUND(const-expr-hoisting):
# constant-expression hoisting in IREE 3.13 miscompiles small i64 constants
# (a scatter with a constant index, `scatter_add_(0, torch.tensor([0]), ...)`),
# nondeterministically: compiles fail or give wrong values; remove the flag
# when test_programs.py's scatter programs pass without it.
# IREE-WORKAROUND(stream-program-order): IREE 3.13's stream scheduler reorders
# an update done in place (a row write, a scatter, an elementwise result
# emplaced into the row it will be written to) before another read of the
# same buffer when it elides or emplaces the copy the update needs (found by
# `purity fuzz`: case_bb455373edac and case_918e493e8413); scheduling in
# program order ("debug" partitioning) keeps every read before the write.
# Remove it when those fuzz regressions pass without it.
COMMON_FLAGS = (
    "--iree-input-demote-f64-to-f32=false",
    "--iree-opt-const-expr-hoisting=false",
    "--iree-stream-partitioning-favor=debug",
)


@dataclass(frozen=True)
class Target:
    name: str  # what users pass: compile(..., target=NAME)
    device_type: str  # the torch device type its code runs on
    driver: str  # IREE's runtime driver
    flags: tuple[str, ...]  # iree-compile flags
    description: str

    @property
    def compile_flags(self) -> list[str]:
        return [*self.flags, *COMMON_FLAGS]

    def runtime_driver(self, linalg_text: str | None = None) -> str:
        """IREE's runtime driver for a program of this target, read when the
        program is compiled. On the CPU it is chosen per program from its
        linalg-on-tensors text (cpu_driver.py: IREE's pool, `local-task`,
        where its linalg ops are large on average, the calling thread,
        `local-sync`, otherwise); `PURITY_IREE_CPU_DRIVER` forces
        one for every program. Without the text: the target's default."""
        if self.device_type != "cpu":
            return self.driver
        forced = os.environ.get("PURITY_IREE_CPU_DRIVER")
        if forced or linalg_text is None:
            return forced or self.driver
        from .cpu_driver import cpu_driver

        return cpu_driver(linalg_text)


# IREE compiles at its default optimization level O0, where the CPU code
# generator keeps a floating-point reduction's order: one serial chain of
# adds (a float32 sum of 3.3M elements accumulated in float64, IREE-WORKAROUND(f32-sum-precision),
# took 2.73 ms on this project's 2-core AMD EPYC). Reassociating it, as O2
# would and as eager's vectorized sums do, runs it as vector lanes: 0.245 ms.
# (Eager's own sums are not in sequential order either; the float64
# accumulation keeps the rounding far below float32's.)
CPU_REDUCTIONS_REASSOCIATED = "--iree-llvmcpu-reassociate-fp-reductions=true"

TARGETS: dict[str, Target] = {
    target.name: target
    for target in (
        Target(
            "cpu",
            "cpu",
            "local-sync",  # the default; per program: `Target.runtime_driver`
            (
                "--iree-hal-target-device=local",
                "--iree-hal-local-target-device-backends=llvm-cpu",
                "--iree-llvmcpu-target-cpu=host",
                CPU_REDUCTIONS_REASSOCIATED,
            ),
            "this machine's CPU (llvm-cpu)",
        ),
        # sm_90 failed in IREE 3.13 with "missing GPU target"; sm_80 code runs on an H200.
        Target(
            "cuda",
            "cuda",
            "cuda",
            ("--iree-hal-target-device=cuda", "--iree-cuda-target=sm_80"),
            "an NVIDIA GPU (sm_80 code)",
        ),
    )
}


def get_target(name: str) -> Target:
    """The target called `name`; a ValueError naming the known ones otherwise."""
    try:
        return TARGETS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown target {name!r} (known: {', '.join(TARGETS)})") from None


def describe_targets() -> str:
    return ", ".join(f"'{t.name}' ({t.description})" for t in TARGETS.values())

"""Why Purity is behind a target on a workload, as measured: what
benchmarks/compare_systems.py prints after its table for each workload where
Purity misses one.

The targets (issue 18): Purity at or below inductor on every workload, and at
or below eager where eager calls a vendor library (oneDNN's convolutions,
MKL's matrix products). A workload that misses a target is reported with the
reason recorded here. One above its target within its own spread (the
per-round ratios' p10 at or below 1.0) is reported as such. A workload that
misses a target with no recorded reason is reported as a finding to look
into: the benchmark cannot tell a regression from a known cost.

Each reason gives its figures and the machine and date it was measured on.
A reason is keyed by the workload's name without its sizes (the longest
recorded prefix of the name applies); `VENDOR_LIBRARIES` names the workloads
whose eager computation runs in a vendor library.
"""

from __future__ import annotations

from dataclasses import dataclass

# Workload name prefix -> the library eager's heavy ops run in.
VENDOR_LIBRARIES = {
    "attention_decode": "MKL (matrix-vector products)",
    "conv_bn_relu": "oneDNN (the convolution)",
    "mlp_train_step": "MKL (matrix products)",
    "llama_decode": "MKL (matrix products)",
}

_EPYC = "2-core AMD EPYC (KVM), 2026-12-07"
# The optimizer steps written out (SGD with momentum, Adam).
_MEMORY_BOUND_UPDATE = (
    "a memory-bound update of 50 parameters: Purity's independent parts run on torch's two threads as "
    f"inductor's loops do, and both run at the memory's bandwidth. ({_EPYC})"
)

REASONS = {
    "mlp_train_step": (
        "IREE's matrix products run on one core: 64×256 @ 256×512 (the forward's, and the weight gradient's of the "
        "same size) takes 200-250 µs in IREE's code, MKL 210 µs on one thread and 130 µs on the two inductor and "
        "eager use. Purity's forward and backward invocations take 347 and 339 µs of its 1267 µs step; "
        "inductor's whole step takes 840 µs. Two-core routes, measured and not kept: IREE's worker pool (35 µs "
        "per dispatch, 11 dispatches: no gain); the product's rows in two parts on torch's threads (each half "
        "took 58-62% of the whole: no gain); MKL through a vendor-kernel split (the invocations fall to 92 + "
        "113 µs, but the step only to 1157-1187 µs: MKL right after an IREE call takes 190 µs instead of "
        f"160 µs, and the split's segments add about 100 µs of Python per step; 1.33x inductor either way). ({_EPYC})"
    ),
    "conv_bn_relu_train_step": (
        "against eager: the BatchNorm+ReLU segment runs in IREE's code on one core, its backward 5 dispatches "
        "over the activation (335 µs in IREE's tool, 436 µs per call in process) and its forward 250 µs, "
        "against eager's BatchNorm and ReLU on two threads (native_batch_norm_backward and threshold_backward: "
        "330 µs); the convolutions are oneDNN's in both. Since the training split keeps var_mean and "
        "native_batch_norm as ops (autograd then takes PyTorch's formulas), the step went 1.45x -> 1.13x "
        f"eager in process (the segment's backward 984 -> 436 µs, its forward 439 -> 250 µs). ({_EPYC})"
    ),
    "conv_bn_relu": (
        "inductor runs the convolution channels-last (its layout optimization: the input and the weight "
        "transposed by a two-thread kernel, then oneDNN on NHWC, 842 µs against 982 µs on NCHW, measured "
        "alone) and fuses BatchNorm+ReLU into one two-thread kernel; Purity runs oneDNN on NCHW, as eager "
        "does. The same channels-last route through Purity (the transpose compiled by IREE, 187 µs on one core; "
        "the convolution 908 µs; BatchNorm+ReLU reading NHWC, 375 µs) took 1525 µs against 1493 µs for the "
        f"route kept (prototype, round robin in one process). ({_EPYC})"
    ),
    "attention_decode": (
        "the step's two matrix-vector products over the 2048-row caches run in IREE's code on one core (p @ v: "
        "70 µs with whole-row tiles, iree/narrow_products.py), where eager's and inductor's run in MKL on two "
        f"threads; the whole step is at inductor's time. ({_EPYC})"
    ),
    "adam": _MEMORY_BOUND_UPDATE,
    "sgd_momentum": _MEMORY_BOUND_UPDATE,
}


@dataclass(frozen=True)
class Miss:
    workload: str
    target: str  # "inductor" or "eager"
    ratio: str  # "1.35x [1.17-1.64]"
    within_spread: bool
    reason: str | None

    def describe(self) -> str:
        where = " (within its spread: p10 at or below 1.0)" if self.within_spread else ""
        return f"Purity / {self.target} {self.ratio}{where}"


_NO_REASON = "NO MEASURED REASON RECORDED (benchmarks/measured_reasons.py): a finding to look into"


def _recorded(table: dict[str, str], workload: str) -> str | None:
    matches = [prefix for prefix in table if workload.startswith(prefix)]
    return table[max(matches, key=len)] if matches else None


def misses(ratios: dict[str, dict[str, tuple[float, float, str]]]) -> list[Miss]:
    """The targets missed: `ratios` maps each workload to {target system:
    (median, p10, printed ratio)} of Purity against it."""
    found = []
    for workload, against in ratios.items():
        targets = ["inductor"] + (["eager"] if _recorded(VENDOR_LIBRARIES, workload) else [])
        for target in targets:
            if target not in against:
                continue
            median, p10, printed = against[target]
            if median > 1.0:
                found.append(Miss(workload, target, printed, p10 <= 1.0, _recorded(REASONS, workload)))
    return found


def report(ratios: dict[str, dict[str, tuple[float, float, str]]]) -> str:
    """The lines printed after the table: per workload, the targets it
    missed, then its measured reason."""
    found = misses(ratios)
    if not found:
        return (
            "Targets: Purity at or below inductor on every workload, and at or below eager where eager calls "
            "a vendor library.\n"
        )
    lines = [
        "Targets missed (Purity above inductor, or above eager where eager calls a vendor library), "
        "with the measured reasons:"
    ]
    for workload in dict.fromkeys(miss.workload for miss in found):
        of_workload = [miss for miss in found if miss.workload == workload]
        ratios_text = "; ".join(miss.describe() for miss in of_workload)
        lines.append(f"- {workload}: {ratios_text}: {of_workload[0].reason or _NO_REASON}")
    return "\n".join(lines) + "\n"

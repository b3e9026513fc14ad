"""What benchmarks/compare_systems.py prints after its table
(benchmarks/measured_reasons.py): every target Purity misses, with its
measured reason; a miss with no recorded reason is flagged, so a regression
is not taken for a known cost."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import measured_reasons  # noqa: E402


def _ratios(**workloads: dict[str, tuple[float, float]]) -> dict[str, dict[str, tuple[float, float, str]]]:
    return {
        name: {target: (median, p10, f"{median:.2f}x") for target, (median, p10) in against.items()}
        for name, against in workloads.items()
    }


def test_a_workload_above_inductor_is_reported_with_its_recorded_reason():
    found = measured_reasons.misses(_ratios(mlp_train_step_64x256={"inductor": (1.35, 1.17), "eager": (0.9, 0.8)}))
    assert [(m.workload, m.target, m.within_spread) for m in found] == [("mlp_train_step_64x256", "inductor", False)]
    assert found[0].reason == measured_reasons.REASONS["mlp_train_step"]


def test_the_longest_recorded_prefix_gives_the_reason():
    found = measured_reasons.misses(_ratios(conv_bn_relu_train_step_8x32x32x32={"eager": (1.2, 1.1)}))
    assert found[0].reason == measured_reasons.REASONS["conv_bn_relu_train_step"]


def test_a_miss_without_a_recorded_reason_is_flagged():
    text = measured_reasons.report(_ratios(kv_write_1k={"inductor": (1.3, 1.2)}))
    assert "kv_write_1k" in text and "NO MEASURED REASON RECORDED" in text


def test_a_miss_within_its_spread_says_so():
    found = measured_reasons.misses(_ratios(adam_50x256x256={"inductor": (1.01, 0.91)}))
    assert found[0].within_spread
    assert "within its spread" in measured_reasons.report(_ratios(adam_50x256x256={"inductor": (1.01, 0.91)}))


def test_eager_is_a_target_only_where_it_calls_a_vendor_library():
    found = measured_reasons.misses(
        _ratios(
            kv_write_1k={"inductor": (0.84, 0.6), "eager": (2.75, 2.1)},
            attention_decode_2048={"inductor": (0.95, 0.8), "eager": (1.08, 0.86)},
        )
    )
    assert [(m.workload, m.target) for m in found] == [("attention_decode_2048", "eager")]


def test_no_miss_reports_every_target_met():
    text = measured_reasons.report(_ratios(kv_write_1k={"inductor": (0.84, 0.6), "eager": (2.75, 2.1)}))
    assert text.startswith("Targets: Purity at or below inductor on every workload")


def test_a_workload_missing_two_targets_is_one_line_with_its_reason_once():
    text = measured_reasons.report(
        _ratios(
            mlp_train_step_64x256={"inductor": (1.35, 1.17), "eager": (1.5, 1.3)},
            kv_write_1k={"inductor": (0.9, 0.6)},
        )
    )
    lines = text.splitlines()[1:]
    assert len(lines) == 1 and "Purity / inductor 1.35x" in lines[0] and "Purity / eager 1.50x" in lines[0]
    assert lines[0].count(measured_reasons.REASONS["mlp_train_step"]) == 1

"""The pass registry, and the command-line tools' behaviour on bad input."""

import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from torch_purity import PurityError, import_fx
from torch_purity.registry import PASSES, get_pass, lit_test_path

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


@pytest.mark.parametrize("name", sorted(PASSES))
def test_every_registered_pass_has_its_lit_test(name):
    path = ROOT / "test" / "Passes" / lit_test_path(name)
    assert path.is_file(), f"{path} is missing"
    assert f"// RUN: purity-opt %s --{name}" in path.read_text(), f"{path} must run --{name}"
    cls = get_pass(name)
    assert cls.name == name
    assert cls.summary(), "a pass's docstring is its documentation"


def _can_raise(pass_class) -> bool:
    """Whether a pass reports located errors: its module raises a
    LocatedPassError (or a subclass), or builds one it hands to `for_each`."""
    source = inspect.getsource(sys.modules[pass_class.__module__])
    subclasses = re.findall(r"class (\w+)\(LocatedPassError\)", source)
    return any(re.search(rf"raise {name}\(", source) for name in ["LocatedPassError", *subclasses])


@pytest.mark.parametrize("name", sorted(n for n in PASSES if _can_raise(get_pass(n))))
def test_every_pass_that_can_fail_has_its_invalid_lit_test(name):
    """Each pass that reports located errors has -verify-diagnostics cases in
    `<pass>-invalid.mlir`, next to its lit test."""
    path = (ROOT / "test" / "Passes" / lit_test_path(name)).with_name(f"{name}-invalid.mlir")
    assert path.is_file(), f"{path} is missing"
    text = path.read_text()
    assert "-verify-diagnostics" in text and f"--{name}" in text and "expected-error" in text


def run_tool(*args, stdin=None):
    return subprocess.run([str(BIN / args[0]), *args[1:]], input=stdin, capture_output=True, text=True)


@pytest.mark.parametrize(
    "args,stdin,expected",
    [
        (["-"], "func.func @f( {", "<stdin>:1:"),
        (["-", "--no-such-pass"], "module {}", "unknown pass or option '--no-such-pass'"),
        (["-", "--canonicalize=not-an-option=1"], "module {}", "invalid pass 'canonicalize{not-an-option=1}'"),
        (["missing.mlir"], None, "could not open input file"),
        (["-", "a.mlir", "b.mlir"], "", "only one input file"),
        (["-", "--purity-verify-contract"], "module {}", "needs stage=NAME, one of functional-torch"),
    ],
)
def test_purity_opt_bad_input_exits_1_without_traceback(args, stdin, expected):
    result = run_tool("purity-opt", *args, stdin=stdin)
    assert result.returncode == 1, result.stderr
    assert expected in result.stderr
    assert "Traceback" not in result.stderr


def test_purity_run_bad_file_exits_1_without_traceback(tmp_path):
    program = tmp_path / "prog.py"
    program.write_text(
        "import torch\nprogram = lambda x: torch.linalg.eigh(x)[0]\n"
        "def example_inputs():\n    return (torch.randn(3, 3),)\n"
    )
    result = run_tool("purity", "run", "--fallback", "error", str(program))
    assert result.returncode == 1
    assert "_linalg_eigh" in result.stderr and "Traceback" not in result.stderr
    result = run_tool("purity", "run", str(program))  # the eager fallback runs the op in eager
    assert result.returncode == 0 and "ran in eager (ops Purity cannot compile): 1" in result.stdout
    result = run_tool("purity", "run", str(tmp_path / "nothing.py"))
    assert result.returncode == 1 and "no such file" in result.stderr


def _purity_run(program: Path, *flags: str) -> str:
    """`purity run` on a program file: its report, after asserting it exited 0."""
    result = run_tool("purity", "run", *flags, str(program))
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_purity_run_lists_vendor_kernels_apart_and_no_vendor_kernels_compiles_them(tmp_path):
    program = tmp_path / "conv.py"
    program.write_text(
        "import torch\n"
        "program = torch.nn.Sequential(torch.nn.Conv2d(16, 16, 3, padding=1), torch.nn.ReLU()).requires_grad_(False)\n"
        "def example_inputs():\n    return (torch.randn(4, 16, 32, 32),)\n"
    )
    report = _purity_run(program)
    assert "ran with PyTorch's kernel (vendor kernels; --no-vendor-kernels compiles them): 1" in report
    assert "aten.convolution.default" in report
    assert "ran in eager (ops Purity cannot compile): 0" in report
    report = _purity_run(program, "--no-vendor-kernels")
    assert "vendor kernels" not in report and "mutations found: 0" in report


def test_purity_run_report_agrees_on_inputs_copied_back():
    """The bundled example's 0-d step counter is written by a result IREE
    returns, then copied into the caller's tensor: the hand-over line must say
    so where the mutation lines say "copied back" (it said "only read"), and
    the reason is the 0-d rule, not a read IREE could not order."""
    report = _purity_run(Path(__file__).parents[2] / "examples" / "kv_cache_update.py")
    copied_back = {
        line.split(": ", 2)[1].split(" of ", 1)[1].split(" ", 1)[0].rstrip(";")
        for line in report.splitlines()
        if "copied back" in line and " of input:" in line
    }
    assert copied_back == {"input:4"}, report
    assert "write of input:4; copied back: a 0-d input's final value comes back in a buffer of its own" in report
    hand_over = next(line for line in report.splitlines() if line.startswith("inputs to IREE"))
    assert "input:4 as its own memory, read; its new value copied into it after the call" in hand_over
    assert "input:0 as its own memory, written in place" in hand_over
    assert "input:4 as its own memory, only read" not in hand_over


def test_purity_run_reports_writes_of_captured_state_by_name(tmp_path):
    program = tmp_path / "captured.py"
    program.write_text(
        "import torch\ncache = torch.zeros(8, 4)\n"
        "def program(x, position: int):\n    cache[position].copy_(x)\n    return cache.sum(0)\n"
        "def example_inputs():\n    return torch.randn(4), 2\n"
    )
    report = _purity_run(program)
    assert "write of captured:cache through aten.select.int(0, input:1)" in report
    assert "runtime values (ints, dynamic dims) guarded by: 0 <= i0 and i0 <= 7" in report
    assert "input:1 as an i64 value" in report
    assert "captured state" in report and "match" in report


def test_unsupported_op_error_names_op_and_line():
    def program(x):
        return torch.linalg.eigh(x)[0]

    x = torch.randn(3, 3)
    with pytest.raises(PurityError) as raised:
        import_fx(program, x)
    message = str(raised.value)
    assert "aten._linalg_eigh.default" in message
    assert f"{__file__}:{program.__code__.co_firstlineno + 1}" in message


def test_tracing_never_writes_the_example_inputs():
    def program(x, y):
        x.add_(1)
        y[0].zero_()
        return x

    x, y = torch.randn(3), torch.randn(2, 2)
    before = (x.clone(), y.clone())
    import_fx(program, x, y)
    assert torch.equal(x, before[0]) and torch.equal(y, before[1])


def test_uniform_reduction_inputs_follow_a_chain_longer_than_the_recursion_limit():
    """purity-materialize-uniform-reduction-inputs walks producer chains with a
    stack of its own: 1500 elementwise ops on a fill, then a sum, get their
    barrier (a recursive walk died past Python's limit)."""
    step = (
        "  %v{n} = linalg.generic {{indexing_maps = [#v, #v], iterator_types = [\"parallel\"]}} "
        "ins(%v{p} : tensor<4xf32>) outs(%e : tensor<4xf32>) {{\n"
        "  ^bb0(%in: f32, %out: f32):\n    %r = arith.addf %in, %in : f32\n    linalg.yield %r : f32\n"
        "  }} -> tensor<4xf32>\n"
    )
    chain = "".join(step.format(n=n, p=n - 1) for n in range(1, 1501))
    text = (
        "#v = affine_map<(d0) -> (d0)>\n#s = affine_map<(d0) -> ()>\n"
        "func.func @f(%x: f32) -> tensor<f32> {\n"
        "  %e = tensor.empty() : tensor<4xf32>\n"
        "  %v0 = linalg.fill ins(%x : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>\n"
        f"{chain}"
        "  %e0 = tensor.empty() : tensor<f32>\n"
        "  %sum = linalg.generic {indexing_maps = [#v, #s], iterator_types = [\"reduction\"]} "
        "ins(%v1500 : tensor<4xf32>) outs(%e0 : tensor<f32>) {\n"
        "  ^bb0(%in: f32, %out: f32):\n    %r = arith.addf %in, %out : f32\n    linalg.yield %r : f32\n"
        "  } -> tensor<f32>\n"
        "  return %sum : tensor<f32>\n}\n"
    )
    done = run_tool("purity-opt", "-", "--purity-materialize-uniform-reduction-inputs", stdin=text)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("util.optimization_barrier") == 1

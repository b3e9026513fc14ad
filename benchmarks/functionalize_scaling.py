"""How purity-functionalize scales with program size, beside PyTorch's own functionalization.

    .venv/bin/python benchmarks/functionalize_scaling.py [--sizes 1000 10000 100000] [--repeats 3]

For each size N, a generated program of about N ATen ops (in-place writes
through select/slice/view chains, metadata mutations, multi-output views,
reads) is imported once into mutable Torch IR; `purity-functionalize` is then
timed on fresh copies of that module (median of --repeats runs) and reported
in microseconds per op. In the same run, PyTorch's functionalization overhead
on the same program is measured as make_fx(torch.func.functionalize(f)) minus
make_fx(f) (medians), and the ratio of the two is printed.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch.fx.experimental.proxy_tensor import make_fx
from torch_mlir import ir
from torch_mlir.passmanager import PassManager

from torch_purity import import_fx
from torch_purity.importer import new_context
from torch_purity.registry import get_pass

OPS_PER_BLOCK = 12


def make_program(blocks: int):
    def program(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        z = x * 1
        for i in range(blocks):
            z[i % 8].add_(y[i % 8])  # select, select, add_
            z[1::2].mul_(1.0001)  # slice, mul_
            z.view(-1)[i % 64].fill_(0.5)  # view, select, fill_
            a, b = z.split(4)  # split (+ two getitems, free)
            b.t_()  # metadata mutation
            b.sub_(0.25)  # write through the transposed chunk
            b.t_()
        return z

    return program


def time_pytorch_functionalization(program, inputs, repeats: int) -> float:
    plain, functional = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        make_fx(program, tracing_mode="fake")(*inputs)
        plain.append(time.perf_counter() - start)
        start = time.perf_counter()
        make_fx(torch.func.functionalize(program), tracing_mode="fake")(*inputs)
        functional.append(time.perf_counter() - start)
    return statistics.median(functional) - statistics.median(plain)


def count_aten_ops(module) -> int:
    body = module.body.operations[0].regions[0].blocks[0]
    return sum(1 for op in body.operations if op.operation.name.startswith(("torch.aten.", "torch.operator")))


def time_purity(module_text: str, repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        context = new_context()
        with context:
            module = ir.Module.parse(module_text)
            pm = PassManager("builtin.module")
            get_pass("purity-functionalize")().add_to(pm)
            pm.enable_verifier(False)
            start = time.perf_counter()
            pm.run(module.operation)
            samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"{'ops':>8} {'purity µs/op':>13} {'pytorch µs/op':>14} {'pytorch/purity':>15}")
    for size in args.sizes:
        program = make_program(max(1, size // OPS_PER_BLOCK))
        inputs = (torch.randn(8, 8), torch.randn(8, 8))
        context = new_context()
        module = import_fx(program, *inputs, context=context)
        ops = count_aten_ops(module)
        text = str(module)
        purity_seconds = time_purity(text, args.repeats)
        pytorch_seconds = time_pytorch_functionalization(program, inputs, args.repeats)
        purity_us = purity_seconds / ops * 1e6
        pytorch_us = pytorch_seconds / ops * 1e6
        print(f"{ops:>8} {purity_us:>13.1f} {pytorch_us:>14.1f} {pytorch_us / purity_us:>14.1f}x", flush=True)


if __name__ == "__main__":
    main()

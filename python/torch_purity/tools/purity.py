"""purity: the main job.

    purity run FILE.py [--dump-ir DIR]

FILE.py defines `program` (a function or an nn.Module) and `example_inputs()`
returning a tuple of its inputs. `purity run` imports the program into mutable
Torch IR (mutation and aliasing kept, locations pointing into FILE.py),
reports every mutation it finds, and prints the IR.
"""

from __future__ import annotations

import argparse
import os
import runpy
import sys
from collections.abc import Sequence
from pathlib import Path

from ..errors import PurityError
from ..importer import import_fx
from ..ir_queries import aten_name, mutating_ops, source_location


class CommandError(Exception):
    pass


def load_program(path: str) -> tuple[object, tuple]:
    """Runs FILE.py and returns its `program` and `example_inputs()`."""
    if not Path(path).is_file():
        raise CommandError(f"no such file: {path}")
    namespace = runpy.run_path(path, run_name="__purity__")
    if "program" not in namespace:
        raise CommandError(f"{path} defines no `program` (a function or nn.Module to compile)")
    if "example_inputs" not in namespace or not callable(namespace["example_inputs"]):
        raise CommandError(f"{path} defines no `example_inputs()` returning the program's inputs")
    inputs = namespace["example_inputs"]()
    return namespace["program"], tuple(inputs) if isinstance(inputs, (list, tuple)) else (inputs,)


def command_run(args: argparse.Namespace) -> int:
    program, inputs = load_program(args.file)
    module = import_fx(program, *inputs)
    mutations = mutating_ops(module)
    print(f"Purity: {args.file}")
    print(f"mutations found: {len(mutations)}")
    for op in mutations:
        print(f"  {aten_name(op):<32} at {source_location(op.location) or 'unknown location'}")
    ir_text = module.operation.get_asm(enable_debug_info=True, pretty_debug_info=False)
    if args.dump_ir:
        os.makedirs(args.dump_ir, exist_ok=True)
        target = Path(args.dump_ir) / "1-mutable-torch.mlir"
        target.write_text(ir_text)
        print(f"IR written to {target}")
    print("\n// Mutable Torch IR (stage 2)")
    print(ir_text)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="purity", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="import, report and print a program's IR")
    run.add_argument("file", help="a Python file defining `program` and `example_inputs()`")
    run.add_argument("--dump-ir", metavar="DIR", help="write the IR of every stage to DIR")
    run.set_defaults(handler=command_run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    try:
        return args.handler(args)
    except (PurityError, CommandError) as error:
        print(f"purity: error: {error}", file=sys.stderr)
        return 1
    except Exception as error:  # a user's program may raise anything; no traceback
        if os.environ.get("PURITY_DEBUG"):
            raise
        print(f"purity: error: {type(error).__name__}: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

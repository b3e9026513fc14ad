"""Source locations of FX nodes, and making make_fx record them for plain functions.

make_fx keeps a frame in `node.stack_trace` only when it belongs to a
`forward` method or to a code object registered as a stack-trace anchor; for a
plain function nothing would be kept. We register every code object defined in
the user's source files (the function, its nested functions, the helpers and
classes beside it) so that the recorded trace reaches the user's own line.
"""

from __future__ import annotations

import linecache
import re
import traceback
import types
from collections.abc import Iterator
from pathlib import Path

import torch
import torch.fx as fx
from torch_mlir.ir import Context, Location

_FRAME_PATTERN = re.compile(r'File "([^"]+)", line ([0-9]+), in ([^\n]+)')


def _code_objects(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            yield from _code_objects(constant)


def _functions_of(obj: object) -> Iterator[types.FunctionType]:
    if isinstance(obj, types.MethodType):
        obj = obj.__func__
    if isinstance(obj, types.FunctionType):
        yield obj
    elif isinstance(obj, type):
        for member in vars(obj).values():
            if isinstance(member, (staticmethod, classmethod)):
                member = member.__func__
            if isinstance(member, types.FunctionType):
                yield member


def register_user_code(entry: object) -> None:
    """Registers as stack-trace anchors all code in the files that define `entry`."""
    roots: list[object] = []
    if isinstance(entry, torch.nn.Module):
        roots.extend(type(m) for m in entry.modules())
    else:
        roots.append(entry)
    anchors = torch.fx.proxy._STACK_TRACE_ANCHORS
    seen_files: set[str] = set()
    for root in roots:
        for function in _functions_of(root):
            filename = function.__code__.co_filename
            candidates = [function]
            if filename not in seen_files:
                seen_files.add(filename)
                for value in function.__globals__.values():
                    candidates.extend(f for f in _functions_of(value) if f.__code__.co_filename == filename)
            for candidate in candidates:
                for code in _code_objects(candidate.__code__):
                    anchors.add((code.co_filename, code.co_name))


_LIBRARY_FOLDERS = tuple(str(Path(m.__file__).parent) for m in (torch, fx)) + (str(Path(__file__).parents[1]),)


def innermost_user_frame(error: BaseException) -> str | None:
    """'file:line' of the innermost frame of the error's traceback outside
    torch and Purity: where the user's code (or a library it calls, such as
    transformers) was when the error was raised."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if not f.filename.startswith(_LIBRARY_FOLDERS)]
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else None


def user_frames(node: fx.Node) -> list[tuple[str, int]]:
    """(file, line) of each user frame of the node, outermost first."""
    trace = node.meta.get("stack_trace") or ""
    return [(file, int(line)) for file, line, _ in _FRAME_PATTERN.findall(trace)]


def source_of(node: fx.Node) -> str | None:
    """'file:line' of the innermost user frame, for messages."""
    frames = user_frames(node)
    if not frames:
        return None
    file, line = frames[-1]
    return f"{file}:{line}"


def _column(file: str, line: int) -> int:
    text = linecache.getline(file, line)
    return len(text) - len(text.lstrip()) + 1 if text.strip() else 1


def node_location(node: fx.Node, context: Context) -> Location:
    """NameLoc(op name) around the user's frames (a call-site chain when nested)."""
    frames = [Location.file(file, line, _column(file, line), context=context) for file, line in user_frames(node)]
    if not frames:
        inner = Location.unknown(context=context)
    elif len(frames) == 1:
        inner = frames[0]
    else:
        inner = Location.callsite(frames[-1], frames[-2::-1], context=context)
    return Location.name(op_display_name(node), childLoc=inner, context=context)


def op_display_name(node: fx.Node) -> str:
    target = node.target
    if isinstance(target, torch._ops.OpOverload):
        return f"{target._schema.name.replace('::', '.')}.{target._overloadname}"
    return getattr(target, "__name__", str(target))

"""Runtime values: a trace where int arguments and dynamic dims are symbols.

A decode position or an offset passed as a Python `int` is traced as a
`SymInt` of its own (PyTorch's ShapeEnv, as Dynamo and torch.export use it),
so the graph takes it as an input (`!torch.int` in the Torch dialect, an
`i64` argument of the compiled function) instead of baking its value in.
Tensors keep their static shapes, except along the dims asked to be dynamic
(a symbol per size, `?` in the Torch types). What the trace had to assume
(an index in range, a slice not empty, `Eq(n, 3)` where a Python `range(n)`
or `if` needed it) is recorded by the ShapeEnv as guards;
`guards.SymbolGuard` is those guards as one Python expression, checked on
every call: a value outside them is a miss, and the caller compiles a new
entry for it. `SymbolicShapes` gives the sizes of results, and the layouts
of output views, that depend on those values, as expressions per call.

0 and 1 are not specialized (ShapeEnv's default treats them as constants):
a decode loop starting at position 0 then compiles twice (position 0's
one-row slice is specialized by the trace itself), not three times.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch._dynamo.source import ConstantSource
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext
from torch.overrides import TorchFunctionMode
from torch.utils._sympy.printers import PythonPrinter

from ..guards import STORAGE_OFFSET, SymbolGuard, SymbolicShapes


class SymbolicInputs:
    """Fake inputs for one trace: tensors with their static shapes (symbols
    along their `dynamic_dims`), the ints at `int_positions` as symbols of
    one ShapeEnv, other values as they are."""

    def __init__(
        self,
        values: Sequence[object],
        int_positions: Sequence[int],
        dynamic_dims: dict[int, Sequence[int]] | None = None,
    ) -> None:
        self.shape_env = ShapeEnv(specialize_zero_one=False)
        self.mode = FakeTensorMode(shape_env=self.shape_env, allow_non_fake_inputs=False)
        self.int_positions = list(int_positions)
        self.dynamic_dims = dict(dynamic_dims or {})
        fake: list[object] = []
        for position, value in enumerate(values):
            if isinstance(value, torch.Tensor) and position in self.dynamic_dims:
                dims = self.dynamic_dims[position]
                context = StatelessSymbolicContext(
                    dynamic_sizes=[DimDynamic.DYNAMIC if d in dims else DimDynamic.STATIC for d in range(value.dim())]
                )
                fake.append(
                    self.mode.from_tensor(value, source=ConstantSource(f"tensor{position}"), symbolic_context=context)
                )
            elif isinstance(value, torch.Tensor):
                fake.append(self.mode.from_tensor(value, static_shapes=True))
            elif position in self.int_positions:
                fake.append(self._symbol(int(value), f"int{position}"))
            else:
                fake.append(value)
        self.values = fake

    def _symbol(self, value: int, name: str) -> torch.SymInt:
        source = ConstantSource(name)
        symbol = self.shape_env.create_symbol(value, source, dynamic_dim=DimDynamic.DYNAMIC, positive=None)
        return self.shape_env.create_symintnode(symbol, hint=value, source=source)

    @property
    def guarded_positions(self) -> list[int]:
        """The inputs the guard reads, in order: ints, and tensors with dynamic dims."""
        return sorted({*self.int_positions, *self.dynamic_dims})

    def guard(self) -> SymbolGuard:
        """The guards the traces so far recorded on the ints and dynamic dims."""
        symbols = [self.values[p] for p in self.guarded_positions]
        return SymbolGuard(self.shape_env.produce_guards_expression(symbols))

    def _symbol_sources(self) -> dict[object, tuple[int, int | None]]:
        """Symbol -> where a call's value of it is read: (input, dim), (input,
        None) for an int input, (input, STORAGE_OFFSET)."""
        sources: dict[object, tuple[int, int | None]] = {}

        def define(size: torch.SymInt, source: tuple[int, int | None]) -> None:
            # Under its own symbol and under the one the trace unified it with.
            for expr in (size.node.expr, self.shape_env.simplify(size.node.expr)):
                if getattr(expr, "is_Symbol", False):
                    sources.setdefault(expr, source)

        for position in self.guarded_positions:
            value = self.values[position]
            if isinstance(value, torch.SymInt):
                define(value, (position, None))
            elif isinstance(value, torch.Tensor):
                for dim, size in enumerate(value.shape):
                    if isinstance(size, torch.SymInt):
                        define(size, (position, dim))
                if isinstance(value.storage_offset(), torch.SymInt):
                    define(value.storage_offset(), (position, STORAGE_OFFSET))
        for symbol in list(self.shape_env.var_to_sources):
            # Symbols replaced by others keep their sources in the ShapeEnv.
            if symbol not in sources:
                replaced = self.shape_env.simplify(symbol)
                if getattr(replaced, "is_Symbol", False) and replaced in sources:
                    sources[symbol] = sources[replaced]
        return sources

    def shapes(
        self,
        shapes: dict[int, Sequence[int | torch.SymInt]],
        views: dict[int, tuple[int, torch.Tensor]] | None = None,
    ) -> SymbolicShapes | None:
        """Per-call shapes of the given results (result -> traced shape)
        where a size is symbolic, and per-call layouts of the given output
        views (output -> (argument, traced view)); None where there is
        nothing to compute. A symbol the inputs do not define (a
        data-dependent size) raises ValueError."""
        sources = self._symbol_sources()
        printer = PythonPrinter()
        symbols: dict[str, tuple[int, int | None]] = {}

        def text(size: int | torch.SymInt) -> str:
            if not isinstance(size, torch.SymInt):
                return str(int(size))
            expr = self.shape_env.simplify(size.node.expr)
            for symbol in expr.free_symbols:
                if symbol not in sources:
                    raise ValueError(f"size {expr} depends on {symbol}, which no input defines")
                symbols[str(symbol)] = sources[symbol]
            return printer.doprint(expr)

        def tuple_text(sizes: Sequence[int | torch.SymInt]) -> str:
            return "(" + "".join(f"{text(size)}, " for size in sizes) + ")"

        results = {
            result: tuple_text(shape)
            for result, shape in shapes.items()
            if any(isinstance(size, torch.SymInt) for size in shape)
        }
        view_texts = {
            output: (
                argument,
                f"({tuple_text(view.shape)}, {tuple_text(view.stride())}, {text(view.storage_offset())})",
            )
            for output, (argument, view) in (views or {}).items()
        }
        if not results and not view_texts:
            return None
        return SymbolicShapes(symbols, results, view_texts)


class SymIntIndexing(TorchFunctionMode):
    """Basic indexing with runtime ints kept symbolic while tracing.

    `x[i]` converts a `SymInt` index with `__index__` before any op sees it
    (Python's indexing protocol, in torch's C++ `__getitem__`), which
    specializes `i` to its traced value. Under this mode an index made of
    ints, `SymInt`s and slices is applied as `select` per int and a slice per
    slice, which take `SymInt`s as they are; `x[i] = v` is that view's
    `copy_(v)` (or `fill_` for a number), as eager's basic indexing
    assignment is. Other indices (tensors, `None`, `...`, bools) go to
    torch's own indexing."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.Tensor.__getitem__ and _basic_symbolic_index(args[1]):
            return _view_at(args[0], args[1])
        if func is torch.Tensor.__setitem__ and _basic_symbolic_index(args[1]):
            view, value = _view_at(args[0], args[1]), args[2]
            if isinstance(value, torch.Tensor):
                view.copy_(value)
            else:
                view.fill_(value)
            return None
        return func(*args, **kwargs)


def _basic_symbolic_index(index: object) -> bool:
    elements = index if isinstance(index, tuple) else (index,)
    symbolic = False
    for element in elements:
        if isinstance(element, torch.SymInt):
            symbolic = True
        elif type(element) is int:
            continue
        elif isinstance(element, slice):
            continue
        else:
            return False
    return symbolic


def _view_at(tensor: torch.Tensor, index: object) -> torch.Tensor:
    dim = 0
    for element in index if isinstance(index, tuple) else (index,):
        if isinstance(element, slice):
            tensor = tensor[(slice(None),) * dim + (element,)]
            dim += 1
        else:
            tensor = tensor.select(dim, element)
    return tensor

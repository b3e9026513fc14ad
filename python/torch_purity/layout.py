"""One layout type: a tensor's (or a view's) sizes, strides and storage
offset, with the questions passes and the runtime ask of it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def contiguous_strides(sizes: tuple[int, ...] | list[int]) -> tuple[int, ...]:
    """Row-major strides (size-0 and size-1 dimensions take stride 1, as torch does)."""
    strides, step = [], 1
    for size in reversed(sizes):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def inverse_permutation(dims: list[int] | tuple[int, ...]) -> list[int]:
    """The permutation undoing `permute(dims)` (negative dims allowed)."""
    rank = len(dims)
    inverse = [0] * rank
    for position, dim in enumerate(dims):
        inverse[dim % rank] = position
    return inverse


@dataclass(frozen=True)
class Layout:
    """Sizes, strides and storage offset of a tensor (or a view) in its storage."""

    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int

    @classmethod
    def of(cls, sizes, strides, offset: int) -> Layout:
        return cls(tuple(sizes), tuple(strides), int(offset))

    @classmethod
    def contiguous(cls, sizes, offset: int = 0) -> Layout:
        return cls(tuple(sizes), contiguous_strides(tuple(sizes)), offset)

    def is_contiguous_from_start(self) -> bool:
        """Row-major from the storage's first element (size-1 dimensions' strides do not matter)."""
        expected = contiguous_strides(self.sizes)
        return self.offset == 0 and all(s == 1 or st == e for s, st, e in zip(self.sizes, self.strides, expected))

    def extent(self) -> tuple[int, int]:
        """[first, last + 1) storage elements reached (empty: (offset, offset))."""
        if any(s == 0 for s in self.sizes):
            return self.offset, self.offset
        low = self.offset + sum((s - 1) * st for s, st in zip(self.sizes, self.strides) if st < 0)
        high = self.offset + sum((s - 1) * st for s, st in zip(self.sizes, self.strides) if st > 0) + 1
        return low, high

    def elements(self) -> np.ndarray:
        """The storage index of every element, in row-major order."""
        index = np.full((), self.offset, dtype=np.int64)
        for size, stride in zip(self.sizes, self.strides):
            index = index[..., None] + np.arange(size, dtype=np.int64) * stride
        return index.reshape(-1)

    def to_json(self) -> list[object]:
        return [list(self.sizes), list(self.strides), self.offset]

    @classmethod
    def from_json(cls, value: list) -> Layout:
        sizes, strides, offset = value
        return cls.of(sizes, strides, offset)


_EXACT_OVERLAP_LIMIT = 1 << 22  # elements; beyond it, overlapping extents count as overlap


def overlap(a: Layout, b: Layout) -> bool:
    """Whether two layouts in one storage share an element (exactly up to
    4M elements together; beyond, whether their extents intersect)."""
    (a_low, a_high), (b_low, b_high) = a.extent(), b.extent()
    if a_low == a_high or b_low == b_high or a_high <= b_low or b_high <= a_low:
        return False
    if np.prod(a.sizes, dtype=np.int64) + np.prod(b.sizes, dtype=np.int64) > _EXACT_OVERLAP_LIMIT:
        return True
    return bool(np.intersect1d(a.elements(), b.elements(), assume_unique=False).size)

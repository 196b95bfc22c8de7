"""One shared-memory segment holding every batched array a subprocess manager needs.

The parent creates the segment from a list of ``(key, layout, count)``
entries; a worker attaches by name with the same entries and gets identical
views. Arrays are carved in order at 64-byte aligned offsets.
"""

from __future__ import annotations

from multiprocessing import shared_memory
from typing import Any

import numpy as np

from ding_env.env_manager.arrays import ArraySpec, allocate, leaves

_ALIGN = 64


def _aligned(size: int) -> int:
    return (size + _ALIGN - 1) // _ALIGN * _ALIGN


def segment_size(entries: list[tuple[str, Any, int]]) -> int:
    """Bytes needed for ``entries``."""
    total = 0
    for _, layout, count in entries:
        for leaf in leaves(layout):
            total += _aligned(count * int(np.prod(leaf.shape, dtype=np.int64)) * leaf.dtype.itemsize)
    return max(total, _ALIGN)


class SharedArrays:
    """Named trees of arrays in one shared-memory segment.

    Args:
        entries: ``(key, layout, count)``: ``arrays[key]`` gets ``count`` rows of ``layout``.
        name: Attach to this existing segment instead of creating one.
    """

    def __init__(self, entries: list[tuple[str, Any, int]], name: str | None = None) -> None:
        size = segment_size(entries)
        if name is None:
            self._shm = shared_memory.SharedMemory(create=True, size=size)
            self._owner = True
        else:
            self._shm = shared_memory.SharedMemory(name=name)
            self._owner = False
        self._offset = 0
        self.arrays: dict[str, Any] = {}
        for key, layout, count in entries:
            self.arrays[key] = allocate(layout, count, self._carve)

    @property
    def name(self) -> str:
        """The segment's name, for workers to attach."""
        return self._shm.name

    def _carve(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        array = np.ndarray(shape, dtype=dtype, buffer=self._shm.buf, offset=self._offset)
        self._offset += _aligned(array.nbytes)
        return array

    def release(self) -> None:
        """Drop the views and close the mapping; the creator also unlinks the segment."""
        self.arrays = {}
        try:
            self._shm.close()
        except BufferError:
            # Views handed to the user are still alive; the mapping goes with them.
            pass
        if self._owner:
            self._owner = False
            self._shm.unlink()


def scalar_flags(dtype: type) -> ArraySpec:
    """The layout of one scalar per row."""
    return ArraySpec((), np.dtype(dtype))

"""One shared-memory segment holding every batched array a subprocess manager needs.

The parent creates the segment from a list of ``(key, layout, count)``
entries; a worker attaches by name with the same entries and gets identical
views. Arrays are carved in order at 64-byte aligned offsets.
"""

from __future__ import annotations

import ctypes
import os
from multiprocessing import shared_memory
from typing import Any

import numpy as np

from ding_env.env_manager.arrays import ArraySpec, allocate
from ding_env.trees import leaves

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
            self._shm = _Segment(create=True, size=size)
            self._owner = True
        else:
            self._shm = _Segment(name=name)
            self._owner = False
        self._offset = 0
        self._bytes = _pinned_bytes(self._shm)
        self.arrays: dict[str, Any] = {}
        for key, layout, count in entries:
            self.arrays[key] = allocate(layout, count, self._carve)

    @property
    def name(self) -> str:
        """The segment's name, for workers to attach."""
        return self._shm.name

    def _carve(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        array = self._bytes[self._offset : self._offset + nbytes].view(dtype).reshape(shape)
        self._offset += _aligned(nbytes)
        return array

    def release(self) -> None:
        """Drop the views and close the mapping; the creator also unlinks the segment.

        While arrays of the segment are still referenced (views a user kept), the mapping stays
        until the last of them is gone; the segment's name is unlinked at once either way.
        """
        self.arrays = {}
        self._bytes = None
        try:
            self._shm.close()
        except BufferError:
            # Views handed to the user are still alive; the mapping goes with them.
            pass
        if self._owner:
            self._owner = False
            self._shm.unlink()


def _pinned_bytes(shm: shared_memory.SharedMemory) -> np.ndarray:
    """The segment as a uint8 array that keeps the mapping alive while any view of it lives.

    numpy holds no buffer export on what an array was built from (it keeps the mmap object only),
    so ``shm.close()`` would unmap the segment under arrays still in use, and reading one would
    crash the process. The arrays here are built on a ctypes array that holds an export on the
    mapping: ``close()`` raises ``BufferError`` until the last view is gone, and the mapping is
    unmapped when that view is.
    """
    return np.frombuffer((ctypes.c_uint8 * shm.size).from_buffer(shm.buf), dtype=np.uint8)


class _Segment(shared_memory.SharedMemory):
    """A ``SharedMemory`` whose finaliser leaves a mapping that views still use to them, quietly.

    Its file descriptor is closed as soon as the segment is mapped (the mapping needs none), so a
    mapping kept alive by a user's views holds no descriptor of ours.
    """

    def __init__(self, name: str | None = None, create: bool = False, size: int = 0) -> None:
        super().__init__(name=name, create=create, size=size)
        if getattr(self, "_fd", -1) >= 0:
            os.close(self._fd)
            self._fd = -1

    def __del__(self) -> None:
        try:
            self.close()
        except BufferError:
            pass  # views a user kept still map the segment; it is unmapped with the last of them


def scalar_flags(dtype: type) -> ArraySpec:
    """The layout of one scalar per row."""
    return ArraySpec((), np.dtype(dtype))

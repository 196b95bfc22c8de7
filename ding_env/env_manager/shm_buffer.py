"""``ShmBuffer``: one numpy array in shared memory, as DI-engine's ``ding.data.ShmBuffer``.

A buffer created before a worker process starts (and passed to it, or inherited by ``fork``) is
the same memory in both processes: one fills it, the other reads it.
"""

from __future__ import annotations

from multiprocessing.sharedctypes import RawArray
from typing import Any

import numpy as np


class ShmBuffer:
    """A shared array of one shape and dtype.

    Args:
        dtype: The array's dtype.
        shape: The array's shape.
        copy_on_get: ``get()`` returns a copy (True) or a view of the shared memory (False).
        ctype: ``torch.Tensor`` to get tensors (sharing the memory of the array ``get`` would return).
    """

    def __init__(self, dtype: Any, shape: tuple[int, ...], copy_on_get: bool = True, ctype: type | None = None):
        self.dtype = np.dtype(dtype)
        self.shape = tuple(int(n) for n in shape)
        self.copy_on_get = copy_on_get
        self.ctype = ctype
        self.buffer = RawArray("b", max(1, int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize))

    def _view(self) -> np.ndarray:
        count = int(np.prod(self.shape, dtype=np.int64))
        return np.frombuffer(self.buffer, dtype=self.dtype, count=count).reshape(self.shape)

    def fill(self, src_arr: np.ndarray) -> None:
        """Copy ``src_arr`` into the buffer.

        Raises:
            ValueError: When its shape or dtype is not the buffer's (nothing is cast).
        """
        if not isinstance(src_arr, np.ndarray) or src_arr.shape != self.shape or src_arr.dtype != self.dtype:
            got = f"{src_arr.dtype} {src_arr.shape}" if isinstance(src_arr, np.ndarray) else type(src_arr).__name__
            raise ValueError(f"ShmBuffer.fill: expected a {self.dtype} array of shape {self.shape}, got {got}")
        np.copyto(self._view(), src_arr)

    def get(self) -> Any:
        """The array in the buffer: a copy, or with ``copy_on_get=False`` a view of the shared memory."""
        data = self._view()
        if self.copy_on_get:
            data = data.copy()
        if self.ctype is not None and self.ctype.__name__ == "Tensor":
            import torch

            data = torch.from_numpy(data)
        return data

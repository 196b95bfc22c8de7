"""torch tensors at a manager's batch boundary: tensors in as actions, tensors out as observations and rewards.

Needs the ``torch`` extra. :class:`TorchEnvManager` wraps any env manager through its
public API; :class:`TorchConverter` is the conversion alone, for code (the collector)
that keeps numpy inside and hands tensors to a policy.

Costs, by device:

- CPU: an array the caller owns (the managers' default, ``copy_on_get=True``) becomes a
  tensor sharing its memory (``torch.from_numpy``, no copy); a view into the managers'
  buffers (``copy_on_get=False``, valid only until the next call) is copied first, so a
  tensor never changes under its holder. CPU action tensors reach the manager as numpy
  views of the same memory.
- CUDA: arrays are staged in pinned host buffers (allocated once per field) and sent with
  ``non_blocking`` copies; CUDA action tensors come back with one device-to-host copy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from ding_env import BaseEnvTimestep, ObsBatch, TimestepBatch
from ding_env.env_manager.treetensor_managers import TreetensorManager
from ding_env.lockstep import check_manager, is_manager


class TorchConverter:
    """Converts trees (dicts, tuples) of numpy arrays to torch tensors on ``device``, and tensors back.

    Args:
        device: Where tensors go: ``"cpu"``, ``"cuda"``, ``"cuda:1"``, a ``torch.device``.

    Raises:
        ValueError: For a device this machine does not have (``"cuda"`` without CUDA).
    """

    def __init__(self, device: str | torch.device = "cpu") -> None:
        self.device = check_device(device)
        # CUDA: a pinned host buffer per field, and the event marking its last copy to the device as done.
        self._staging: dict[tuple, tuple[torch.Tensor, torch.cuda.Event]] = {}

    def to_torch(self, value: Any, key: tuple = ()) -> Any:
        """A tree of numpy arrays (or scalars) as tensors on the device; other leaves are left as they are.

        Args:
            value: The tree.
            key: Names this tree's fields, so each gets pinned staging buffers of its own (CUDA).
        """
        if isinstance(value, Mapping):
            return {name: self.to_torch(sub, (*key, name)) for name, sub in value.items()}
        if isinstance(value, tuple):
            return tuple(self.to_torch(sub, (*key, index)) for index, sub in enumerate(value))
        if isinstance(value, (np.ndarray, np.generic, bool, int, float)):
            return self._tensor(np.asarray(value), key)
        return value

    def to_numpy(self, value: Any) -> Any:
        """A tree of tensors (on any device) as numpy arrays; non-tensor leaves are left as they are."""
        if isinstance(value, torch.Tensor):
            return value.detach().cpu().numpy()  # .cpu() is a no-op for a CPU tensor: the array shares its memory
        if isinstance(value, Mapping):
            return {name: self.to_numpy(sub) for name, sub in value.items()}
        if isinstance(value, (tuple, list)):
            return type(value)(self.to_numpy(sub) for sub in value)
        return value

    def _tensor(self, array: np.ndarray, key: tuple) -> torch.Tensor:
        if self.device.type == "cpu":
            if not (array.flags.owndata and array.flags.writeable):
                array = array.copy()  # a view into the manager's buffers changes at its next call
            return torch.from_numpy(array)
        dtype = torch.from_numpy(np.zeros(0, dtype=array.dtype)).dtype
        staging, copied = self._staging.get(key, (None, None))
        if staging is None or staging.shape != array.shape or staging.dtype != dtype:
            staging, copied = torch.empty(array.shape, dtype=dtype, pin_memory=True), torch.cuda.Event()
            self._staging[key] = (staging, copied)
        else:
            copied.synchronize()  # its last non_blocking copy has left the buffer before it is overwritten
        staging.numpy()[...] = array
        tensor = staging.to(self.device, non_blocking=True)
        copied.record()
        return tensor


def check_device(device: str | torch.device) -> torch.device:
    """``device`` as a ``torch.device``, checked to exist here: an absent one fails now, not at the first batch.

    Raises:
        ValueError: Naming the device, when torch cannot place a tensor on it.
    """
    device = torch.device(device)
    try:
        torch.empty(0, device=device)  # raises for a CUDA device on a CPU-only build, or one past the last GPU
    except (AssertionError, RuntimeError) as error:
        cuda = device.type == "cuda"
        seen = f"; torch {torch.__version__} sees {torch.cuda.device_count()} CUDA devices" if cuda else ""
        raise ValueError(
            f"device {str(device)!r} is not available on this machine ({error}){seen}: use device='cpu'"
        ) from error
    return device


class TorchEnvManager:
    """A view of an env manager that takes and returns torch tensors.

    Args:
        manager: Any env manager (launched or not).
        device: Where observations, rewards and done flags are returned.

    Raises:
        ValueError: For a device this machine does not have.

    Example::

        with TorchEnvManager(create_env_manager({"type": "subprocess"}, [cartpole] * 8), device="cpu") as envs:
            envs.seed(0)
            envs.launch()
            ready = envs.ready_obs_batch  # ready.obs is a float32 tensor
            batch = envs.step_batch(ready.env_id, policy(ready.obs))  # actions: a tensor
            batch.reward, batch.done, batch.truncated  # tensors on the device

    Everything else (``launch``, ``seed``, ``reset``, ``close``, spaces, env attributes) is
    the manager's. ``env_id`` arrays and infos stay numpy and Python objects.

    The dict API (``ready_obs``, ``step``), one entry per env, is that of ``BaseEnvManager`` and
    the subprocess managers: observations and rewards (arrays) come back as tensors, while each
    env's ``done`` and ``truncated`` stay Python bools, as Gymnasium's single-env ``NumpyToTorch``
    and DI-engine's ``to_tensor`` leave them: they steer per-env control flow (``if timestep.done``),
    which a tensor on CUDA would stall, and batched flags are what ``step_batch`` returns as tensors.
    Over the V2 managers, whose dict API is DI-engine's treetensor one, the dict API raises a
    ``TypeError``: use the batched API.
    """

    def __init__(self, manager: Any, device: str | torch.device = "cpu") -> None:
        self.manager = manager
        self.converter = TorchConverter(device)  # checks the device now, not at the first batch
        self._batched = is_manager(manager)  # the env_pool type has the dict API only

    @property
    def device(self) -> torch.device:
        """Where tensors are returned."""
        return self.converter.device

    @property
    def ready_obs_batch(self) -> ObsBatch:
        """The manager's ``ready_obs_batch`` with the observations as tensors."""
        if not self._batched:
            check_manager(self.manager, "TorchEnvManager's batched API")
        ready = self.manager.ready_obs_batch
        return ObsBatch(ready.env_id, self.converter.to_torch(ready.obs, ("obs",)))

    def step_batch(self, env_id: Any, action: Any) -> TimestepBatch:
        """The manager's ``step_batch``; ``action`` may be a tensor (or a tree of them) on any device."""
        if not self._batched:
            check_manager(self.manager, "TorchEnvManager's batched API")
        convert = self.converter
        batch = self.manager.step_batch(convert.to_numpy(env_id), convert.to_numpy(action))
        return batch._replace(
            obs=convert.to_torch(batch.obs, ("step", "obs")),
            reward=convert.to_torch(batch.reward, ("step", "reward")),
            done=convert.to_torch(batch.done, ("step", "done")),
            truncated=convert.to_torch(batch.truncated, ("step", "truncated")),
        )

    @property
    def ready_obs(self) -> dict[int, Any]:
        """The manager's ``ready_obs`` with each observation as tensors.

        Raises:
            TypeError: Over a V2 manager (its ``ready_obs`` is DI-engine's stacked treetensor one).
        """
        self._check_dict_api("ready_obs")
        return {env_id: self.converter.to_torch(obs) for env_id, obs in self.manager.ready_obs.items()}

    def step(self, actions: Mapping[int, Any]) -> dict[int, BaseEnvTimestep]:
        """The manager's ``step``; actions may be tensors.

        Returns:
            ``{env_id: timestep}`` with ``obs`` and ``reward`` as tensors on the device; ``done`` and
            ``truncated`` are Python bools (per-env flags; ``step_batch`` gives them as tensors) and
            ``info`` is the env's.

        Raises:
            TypeError: Over a V2 manager (its ``step`` takes and returns DI-engine's treetensor batches).
        """
        self._check_dict_api("step")
        timesteps = self.manager.step({env_id: self.converter.to_numpy(action) for env_id, action in actions.items()})
        to_torch = self.converter.to_torch
        return {
            env_id: timestep._replace(obs=to_torch(timestep.obs), reward=to_torch(timestep.reward))
            for env_id, timestep in timesteps.items()
        }

    def _check_dict_api(self, name: str) -> None:
        if isinstance(self.manager, TreetensorManager):
            raise TypeError(
                f"TorchEnvManager.{name}: {type(self.manager).__name__}'s dict API is DI-engine's treetensor one "
                "(the ready envs' observations stacked, not {env_id: obs}), which TorchEnvManager does not "
                "convert: use ready_obs_batch and step_batch, which return tensors over every manager"
            )

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name == "manager":
            raise AttributeError(name)
        if any(name in vars(cls) for cls in type(self).__mro__):
            # A property of this class raised AttributeError: raise it again, never the manager's attribute of
            # that name (which would hand back the manager's numpy values as if converted).
            return object.__getattribute__(self, name)
        return getattr(self.manager, name)

    def __enter__(self) -> TorchEnvManager:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.manager.__exit__(*exc_info)

    def __repr__(self) -> str:
        return f"TorchEnvManager({self.manager!r}, device={str(self.device)!r})"

"""TorchEnvManager: tensors in and out of every manager, the same trajectories as with numpy."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the torch extra is not installed (make test installs it)")

from ding_env import create_env_manager  # noqa: E402
from ding_env.torch_adapter import TorchConverter, TorchEnvManager  # noqa: E402
from tests.conftest import manager_cfg  # noqa: E402
from tests.envs import CountingEnv, DictActionEnv, cartpole_fn  # noqa: E402


def test_batches_are_tensors_with_the_same_values_as_the_managers_arrays(make_adapted):
    envs = make_adapted(TorchEnvManager, [cartpole_fn] * 3)
    reference = create_env_manager(manager_cfg("base"), [cartpole_fn] * 3)
    with reference:
        for manager in (envs, reference):
            manager.seed(4)
            manager.launch()
        generator = torch.Generator().manual_seed(0)
        episode_ends = 0
        for _ in range(60):
            ready, expected_ready = envs.ready_obs_batch, reference.ready_obs_batch
            assert isinstance(ready.obs, torch.Tensor) and ready.obs.dtype == torch.float32
            np.testing.assert_array_equal(ready.obs.numpy(), expected_ready.obs)
            actions = torch.randint(0, 2, (len(ready.env_id),), generator=generator)
            batch = envs.step_batch(ready.env_id, actions)
            expected = reference.step_batch(expected_ready.env_id, actions.numpy())
            assert batch.reward.dtype == torch.float32 and batch.reward.shape == (3, 1)
            assert batch.done.dtype == batch.truncated.dtype == torch.bool
            for field in ("obs", "reward", "done", "truncated"):
                np.testing.assert_array_equal(getattr(batch, field).numpy(), getattr(expected, field), err_msg=field)
            assert batch.info == expected.info
            episode_ends += int(batch.done.sum())
        assert episode_ends > 0


def test_returned_tensors_never_change_under_their_holder(make_adapted):
    envs = make_adapted(TorchEnvManager, [partial(CountingEnv, {"limit": 100})] * 2)
    envs.seed(0)
    envs.launch()
    ready = envs.ready_obs_batch
    first_obs = ready.obs
    kept = first_obs.clone()
    batch = envs.step_batch(ready.env_id, torch.zeros(2, dtype=torch.int64))
    kept_step = batch.obs.clone()
    for _ in range(3):
        envs.step_batch(envs.ready_obs_batch.env_id, torch.ones(2, dtype=torch.int64))
    assert torch.equal(first_obs, kept) and torch.equal(batch.obs, kept_step)


def test_tree_observations_and_dict_actions_as_tensors(make_adapted):
    envs = make_adapted(TorchEnvManager, [partial(DictActionEnv, {"nested": True, "limit": 100})] * 2)
    envs.seed(0)
    envs.launch()
    ready = envs.ready_obs_batch
    assert isinstance(ready.obs["vec"], torch.Tensor) and isinstance(ready.obs["pair"][0], torch.Tensor)
    action = {"push": torch.tensor([1, 2]), "scale": torch.tensor([[0.5], [2.0]])}
    batch = envs.step_batch(ready.env_id, action)
    # CountingEnv's reward is the step number (1) plus the action, here push * scale
    assert batch.reward[:, 0].tolist() == [1.5, 5.0]
    for push_type, scale_type, scale_dtype in envs.action_types:  # numpy values reached the envs
        assert push_type in ("int64", "ndarray") and (scale_type, scale_dtype) == ("ndarray", "float32")


@pytest.mark.parametrize("manager_type", ["base", "subprocess", "async_subprocess"])  # the V2 ones have their own
def test_dict_api_takes_and_returns_tensors(manager_type):
    env_fns = [partial(DictActionEnv, {"nested": True, "limit": 100})] * 2
    with TorchEnvManager(create_env_manager(manager_cfg(manager_type), env_fns)) as envs:
        envs.seed(0)
        envs.launch()
        assert isinstance(envs.ready_obs[0]["count"], torch.Tensor)
        timesteps = envs.step({0: {"push": torch.tensor(1), "scale": torch.tensor([1.0])}})
        assert isinstance(timesteps[0].obs["vec"], torch.Tensor) and timesteps[0].reward.tolist() == [2.0]
        # Per-env flags stay Python bools (as Gymnasium's single-env NumpyToTorch gives them); step_batch's are tensors.
        assert timesteps[0].done is False and timesteps[0].truncated is False


def test_cpu_tensors_share_memory_with_arrays_the_caller_owns():
    converter = TorchConverter("cpu")
    owned = np.array([[0, 1, 2], [3, 4, 5]], dtype=np.float32)
    assert converter.to_torch(owned).data_ptr() == owned.ctypes.data  # zero-copy
    view = owned[:, 1:]  # as the managers' views into their buffers (copy_on_get=False)
    tensor = converter.to_torch(view)
    view[0, 0] = -1.0
    assert tensor[0, 0] == 1.0  # copied: the view may change at the manager's next call
    action = torch.arange(3)
    assert converter.to_numpy(action).ctypes.data == action.data_ptr()


def test_bad_tensor_action_is_refused_by_the_manager_with_its_message(make_adapted):
    envs = make_adapted(TorchEnvManager, [partial(CountingEnv, {"limit": 100})] * 2)
    envs.launch()
    with pytest.raises(ValueError, match="action"):
        envs.step_batch(envs.ready_obs_batch.env_id, torch.tensor([0, 7]))  # 7 is outside Discrete(3)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device on this machine")
def test_cuda_device_round_trip():
    with TorchEnvManager(create_env_manager({"type": "subprocess"}, [cartpole_fn] * 2), device="cuda") as envs:
        envs.seed(0)
        envs.launch()
        held = []
        for _ in range(5):
            ready = envs.ready_obs_batch
            assert ready.obs.is_cuda
            batch = envs.step_batch(ready.env_id, torch.zeros(2, dtype=torch.int64, device="cuda"))
            assert batch.obs.is_cuda and batch.reward.is_cuda and batch.done.is_cuda
            held.append((batch.obs, batch.obs.cpu()))
        torch.cuda.synchronize()
        for on_device, copied in held:  # pinned staging buffers are not overwritten before their copy is done
            assert torch.equal(on_device.cpu(), copied)


@pytest.mark.parametrize("manager_type", ["base_v2", "subprocess_v2"])
def test_dict_api_over_a_v2_manager_is_refused_naming_the_batched_api(manager_type):
    with TorchEnvManager(create_env_manager(manager_cfg(manager_type), [cartpole_fn] * 2)) as envs:
        envs.launch()
        # Its ready_obs is DI-engine's stacked one: it was handed back unconverted, a numpy array.
        with pytest.raises(TypeError, match=r"ready_obs: \w+V2's dict API is DI-engine's treetensor one.*step_batch"):
            envs.ready_obs  # noqa: B018 - the property is what is checked
        with pytest.raises(TypeError, match=r"step: \w+V2's dict API .*ready_obs_batch and step_batch"):
            envs.step({0: torch.tensor(0)})
        assert isinstance(envs.ready_obs_batch.obs, torch.Tensor)  # the batched API over it is unchanged


def test_a_device_this_machine_lacks_is_refused_when_built():
    missing = f"cuda:{torch.cuda.device_count()}"  # one past the last GPU: cuda:0 on a machine without CUDA
    with create_env_manager(manager_cfg("base"), [cartpole_fn]) as manager:
        with pytest.raises(ValueError, match=rf"device '{missing}' is not available on this machine"):
            TorchEnvManager(manager, device=missing)


def test_over_the_env_pool_type_the_dict_api_works_and_the_batched_one_says_why_not():
    """The env_pool type keeps DI-engine's dict interface: the batched calls failed with a bare AttributeError."""
    pool = create_env_manager(dict(type="env_pool", env_id="CartPole-v1", env_num=2, batch_size=2))
    with pool:
        envs = TorchEnvManager(pool)
        envs.seed(0)
        envs.launch()
        timesteps = envs.step({0: torch.tensor(0), 1: torch.tensor(1)})
        assert isinstance(timesteps[0].obs, torch.Tensor) and timesteps[1].reward.dtype == torch.float32
        for call in (lambda: envs.ready_obs_batch, lambda: envs.step_batch(np.arange(2), np.zeros(2, np.int64))):
            with pytest.raises(TypeError, match=r"PoolEnvManager has DI-engine's dict interface only .*batch_source"):
                call()

import subprocess
import sys

import pytest

from tests.support import REPO


def test_import_is_light():
    code = (
        "import sys, ding_env\n"
        "heavy = ('torch', 'ale_py', 'mujoco', 'dizoo', 'tqdm', 'gym',\n"
        "         'stable_baselines3', 'pettingzoo', 'treetensor', 'zmq', 'msgspec', 'ray', 'envpool')\n"
        "heavy = [m for m in heavy if m in sys.modules]\n"
        "print(heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_run_whose_output_is_no_terminal_imports_no_progress_bar_library():
    # tqdm was imported for every run, though a bar is drawn only on a terminal (getting-started.md says so).
    code = (
        "import sys\n"
        "from ding_env.cli import main\n"
        "code = main(['run', 'configs/cartpole.py', '--steps', '50', '--eval-episodes', '1', '--manager', 'base'])\n"
        "print(code, 'tqdm' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert result.stdout.splitlines()[-1] == "0 False"


def test_public_names_exist_and_are_documented():
    import ding_env

    names = [
        "BaseEnv",
        "BaseEnvTimestep",
        "DingEnvWrapper",
        "BaseEnvManager",
        "SyncSubprocessEnvManager",
        "AsyncSubprocessEnvManager",
        "BaseEnvManagerV2",
        "SubprocessEnvManagerV2",
        "create_env_manager",
        "get_vec_env_setting",
        "get_env_cls",
        "ENV_REGISTRY",
    ]
    for name in names:
        obj = getattr(ding_env, name)
        if name != "ENV_REGISTRY":
            assert obj.__doc__, name


# Import lines as DI-engine code writes them; each must work after replacing ``ding.envs`` with ``ding_env``.
DI_ENGINE_IMPORTS = """
from ding.envs import BaseEnv, BaseEnvTimestep, DingEnvWrapper, get_vec_env_setting, get_env_cls
from ding.envs import BaseEnvManager, SyncSubprocessEnvManager, AsyncSubprocessEnvManager
from ding.envs import create_env_manager, get_env_manager_cls, BaseEnvManagerV2, SubprocessEnvManagerV2
from ding.envs import setup_ding_env_manager
from ding.envs import NoopResetWrapper, MaxAndSkipWrapper, EpisodicLifeWrapper, FireResetWrapper, WarpFrameWrapper
from ding.envs import ScaledFloatFrameWrapper, ClipRewardWrapper, FrameStackWrapper, TimeLimitWrapper
from ding.envs import ObsNormWrapper, RewardNormWrapper, ObsTransposeWrapper, RamWrapper, ActionRepeatWrapper
from ding.envs import DelayRewardWrapper, StaticObsNormWrapper, GymHybridDictActionWrapper, ObsPlusPrevActRewWrapper
from ding.envs import TransposeWrapper, FlatObsWrapper, GymToGymnasiumWrapper, AllinObsWrapper, RunningMeanStd
from ding.envs import ENV_WRAPPER_REGISTRY, create_env_wrapper, get_default_wrappers, check_all, check_step
from ding.envs.common import affine_transform, save_frames_as_gif
from ding.envs.common.common_function import affine_transform
from ding.envs.env.base_env import BaseEnv, BaseEnvTimestep
from ding.envs.env_wrappers.env_wrappers import AllinObsWrapper
from ding.envs.env_manager.base_env_manager import BaseEnvManager, BaseEnvManagerV2
from ding.envs.env_manager.subprocess_env_manager import SyncSubprocessEnvManager, SubprocessEnvManagerV2
from ding.envs.env import BaseEnv, BaseEnvTimestep, DingEnvWrapper
from ding.envs.env import check_all, check_reset, check_step, check_obs_deepcopy, demonstrate_correct_procedure
from ding.envs.env_manager import BaseEnvManager, SyncSubprocessEnvManager, AsyncSubprocessEnvManager
from ding.envs.env_manager import create_env_manager, get_env_manager_cls, BaseEnvManagerV2, SubprocessEnvManagerV2
from ding.envs.env_wrappers import MaxAndSkipWrapper, WarpFrameWrapper, ScaledFloatFrameWrapper, FrameStackWrapper
from ding.envs.env_wrappers import EvalEpisodeReturnWrapper, TimeLimitWrapper
"""


def test_di_engine_imports_port_by_renaming_the_package():
    code = DI_ENGINE_IMPORTS.replace("ding.envs", "ding_env") + (
        "import sys, ding_env, ding_env.env_manager as managers, ding_env.env_wrappers as wrappers\n"
        "assert SyncSubprocessEnvManager is ding_env.SyncSubprocessEnvManager is managers.SyncSubprocessEnvManager\n"
        "assert AsyncSubprocessEnvManager is get_env_manager_cls('async_subprocess')\n"
        "assert SubprocessEnvManagerV2 is ding_env.SubprocessEnvManagerV2 is get_env_manager_cls('subprocess_v2')\n"
        "from ding_env import *\n"
        "assert MaxAndSkipWrapper is ding_env.MaxAndSkipWrapper is wrappers.MaxAndSkipWrapper\n"
        "print([m for m in ('torch', 'ale_py', 'mujoco', 'dizoo') if m in sys.modules])\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_unknown_names_raise_attribute_errors():
    import ding_env
    import ding_env.env_manager

    for module in (ding_env, ding_env.env_manager):
        with pytest.raises(AttributeError, match="has no attribute 'SyncSubprocessManager'"):
            module.SyncSubprocessManager  # noqa: B018

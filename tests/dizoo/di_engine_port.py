"""DI-engine 0.5.3's own dizoo env modules, ported by docs/porting.md's import renames alone, in ``.venv-di-engine``.

Each family's modules are copied from DI-engine's installed ``dizoo`` into a package of their own
under DIR with only their import lines rewritten (``ding_env.porting.rename_imports``), imported,
and run for a few steps in the serial and the subprocess manager with the same seeded actions.

Usage::

    .venv-di-engine/bin/python tests/dizoo/di_engine_port.py DIR FAMILY [FAMILY ...]

Prints one JSON line: per family, the ported modules' DI-engine imports left (none expected),
whether DI-engine's ``ding`` package got imported, the registered class and each manager's
outcome (steps, episodes, a digest of the observations), or the error an unreachable simulator gives.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import logging
import os
import re
import subprocess
import sys
import traceback
import warnings
from pathlib import Path

warnings.simplefilter("ignore")
logging.disable(logging.WARNING)
REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

import dizoo  # noqa: E402 - our dizoo, extended with DI-engine's installed one
from ding_env import BaseEnvManager, SyncSubprocessEnvManager  # noqa: E402
from ding_env.porting import rename_imports  # noqa: E402
from ding_env.registry import ENV_REGISTRY  # noqa: E402

DI_ENGINE_DIZOO = next(Path(path) for path in dizoo.__path__ if "site-packages" in path)
STEPS = 30

# family -> (DI-engine's env folder, its modules, the module:class to run, env type, the env config)
FAMILIES = {
    "cartpole": ("classic_control/cartpole/envs", ["cartpole_env"], "cartpole_env:CartPoleEnv", "cartpole", {}),
    # act_scale: read by its __init__, set by DI-engine's pendulum configs, absent from its class.
    "pendulum": (
        "classic_control/pendulum/envs",
        ["pendulum_env"],
        "pendulum_env:PendulumEnv",
        "pendulum",
        {"act_scale": True},
    ),
    "lunarlander": (
        "box2d/lunarlander/envs",
        ["lunarlander_env"],
        "lunarlander_env:LunarLanderEnv",
        "lunarlander",
        {"env_id": "LunarLander-v2"},
    ),
    "minigrid": (
        "minigrid/envs",
        ["minigrid_env", "minigrid_wrapper"],
        "minigrid_env:MiniGridEnv",
        "minigrid",
        # The keys of DI-engine's minigrid configs (its __init__ reads them; its class config lacks them).
        {
            "env_id": "MiniGrid-Empty-8x8-v0",
            "flat_obs": True,
            "full_obs": False,
            "onehot_obs": False,
            "move_bonus": False,
            "max_step": 300,
        },
    ),
    "atari": (
        "atari/envs",
        ["atari_env", "atari_wrappers"],
        "atari_env:AtariEnv",
        "atari",
        {"env_id": "PongNoFrameskip-v4", "frame_stack": 4, "is_train": True},
    ),
    "mujoco": (
        "mujoco/envs",
        ["mujoco_env", "mujoco_wrappers", "mujoco_gym_env"],
        "mujoco_env:MujocoEnv",
        "mujoco",
        # DI-engine's configs name the v3 ids (mujoco-py); legacy gym's v4 ids run on the mujoco bindings.
        {"env_id": "HalfCheetah-v4"},
    ),
}

_DI_ENGINE_IMPORT = re.compile(r"^\s*(from|import)\s+ding(\.|\s)", re.MULTILINE)


def port(family: str, root: Path) -> dict:
    """Copy the family's modules into ``root/ported_<family>`` with renamed imports; import and register."""
    folder, modules, target, env_type, _ = FAMILIES[family]
    package = root / f"ported_{family}"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("")
    left = []
    for module in modules:
        ported = rename_imports((DI_ENGINE_DIZOO / folder / f"{module}.py").read_text())
        (package / f"{module}.py").write_text(ported)
        left += [line.strip() for line in ported.splitlines() if _DI_ENGINE_IMPORT.match(line)]
    module_name, class_name = target.split(":")
    env_cls = getattr(importlib.import_module(f"ported_{family}.{module_name}"), class_name)
    return {
        "di_engine_imports_left": left,
        "target": f"ported_{family}.{target}",
        "registered": ENV_REGISTRY.get(env_type) is env_cls,
    }


def run_in(manager_cls: type, family: str) -> dict:
    """Steps of the ported env in a manager: two envs, static seeds, actions from the seeded action space."""
    _, _, target, _, cfg = FAMILIES[family]
    module_name, class_name = target.split(":")
    env_cls = getattr(importlib.import_module(f"ported_{family}.{module_name}"), class_name)
    env_cfg = {**env_cls.default_config(), **cfg} if hasattr(env_cls, "default_config") else dict(cfg)
    try:
        with manager_cls([lambda: env_cls(_easydict(env_cfg))] * 2, {}) as manager:
            manager.seed(0, dynamic_seed=False)
            manager.launch()
            space = manager.action_space
            space.seed(0)
            digest, episodes = hashlib.sha256(), 0
            for _ in range(STEPS):
                timesteps = manager.step({env_id: space.sample() for env_id in manager.ready_obs_id})
                for env_id in sorted(timesteps):
                    digest.update(np.ascontiguousarray(timesteps[env_id].obs).tobytes())
                    episodes += bool(timesteps[env_id].done)
            return {"steps": STEPS * 2, "episodes": episodes, "obs_digest": digest.hexdigest()}
    except Exception as error:  # noqa: BLE001 - reported to the test, which asserts on it
        return {"error": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc(limit=-4)}


def check(family: str, root: Path, target: str) -> dict:
    """``ding-env check TARGET --di-engine --config FILE`` on the ported class: exit code and findings by severity."""
    config = root / f"{family}_check_config.py"
    config.write_text(f"config = dict(env={FAMILIES[family][4]!r})\n")
    command = [sys.executable, "-W", "ignore", "-m", "ding_env", "check", target, "--di-engine", "--json"]
    command += ["--config", str(config), "--episodes", "1", "--max-steps", "30"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(REPO)])}
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=root, timeout=300)
    if done.returncode == 2:
        return {"exit_code": 2, "stderr": done.stderr[-2000:]}
    report = json.loads(done.stdout)
    by_severity: dict[str, list[str]] = {"error": [], "warning": []}
    for finding in report["findings"]:
        by_severity[finding["severity"]].append(f"{finding['check']}: {finding['message']}")
    return {"exit_code": done.returncode, **by_severity}


def _easydict(cfg: dict) -> dict:
    from easydict import EasyDict

    return EasyDict(cfg)


def main() -> None:
    root = Path(sys.argv[1])
    sys.path.insert(0, str(root))
    results = {}
    for family in sys.argv[2:]:
        try:
            result = port(family, root)
        except Exception as error:  # noqa: BLE001 - reported to the test, which asserts on it
            results[family] = {"import_error": f"{type(error).__name__}: {error}"}
            continue
        result["base"] = run_in(BaseEnvManager, family)
        result["subprocess"] = run_in(SyncSubprocessEnvManager, family)
        result["check"] = check(family, root, result["target"])
        results[family] = result
    results["ding_imported"] = "ding" in sys.modules
    print(json.dumps(results))


if __name__ == "__main__":
    main()

"""`ding-env port`: imports renamed and every other byte kept, the report, --in-place, --fix and --try."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ding_env.porting import rename_imports
from ding_env.summary import counted

REPO = Path(__file__).resolve().parents[2]


def ding_env_port(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "ding_env", "port", *args], cwd=cwd, env=env, capture_output=True, timeout=300
    )


def port_json(*args: str, cwd: Path) -> tuple[int, dict]:
    done = ding_env_port(*args, "--json", cwd=cwd)
    assert done.returncode in (0, 1), done.stderr.decode()
    return done.returncode, json.loads(done.stdout)


ENV_MODULE = b'''"""An env written for DI-engine. from ding.envs import BaseEnv stays in this docstring."""\r
import numpy as np\r
from ding.envs import BaseEnv, BaseEnvTimestep\r
from ding.utils import (\r
    ENV_REGISTRY,\r
)\r
name = "caf\xe9"  # a Latin-1 byte, not UTF-8\r
x = 1'''


def test_only_import_lines_change_and_every_other_byte_stays(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "my_env.py").write_bytes(ENV_MODULE)
    (tmp_path / "src" / "data.bin").write_bytes(b"\x00\xff\r\n")
    done = ding_env_port("src", "--out", "port", cwd=tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    expected = ENV_MODULE.replace(b"\r\nfrom ding.envs import", b"\r\nfrom ding_env import").replace(
        b"from ding.utils import", b"from ding_env.utils import"
    )
    assert b"DI-engine. from ding.envs import BaseEnv stays" in expected  # the docstring's mention stays
    assert (tmp_path / "port" / "my_env.py").read_bytes() == expected
    assert (tmp_path / "port" / "data.bin").read_bytes() == b"\x00\xff\r\n"
    report = (tmp_path / "port" / "PORTING.md").read_text()
    assert "`my_env.py:3`: `from ding.envs import BaseEnv, BaseEnvTimestep`" in report
    assert report in done.stdout.decode()


LATIN1_MODULE = (
    "# -*- coding: latin-1 -*-\n"
    "import numpy as np\n"
    "from ding.envs import BaseEnv  # caf\xe9\n"
    "x = np.float_(1) + np.bool8(True)\n"
).encode("latin-1")


def test_a_file_in_its_declared_encoding_is_scanned_fixed_and_written_in_it(tmp_path):
    (tmp_path / "lat_env.py").write_bytes(LATIN1_MODULE)
    _, report = port_json("lat_env.py", "--out", "port/lat_env.py", "--fix", cwd=tmp_path)
    assert not [item for item in report["items"] if "does not parse" in item["what"]]
    assert (tmp_path / "port" / "lat_env.py").read_bytes() == LATIN1_MODULE.replace(b"ding.envs", b"ding_env").replace(
        b"np.float_(1) + np.bool8(True)", b"np.float64(1) + np.bool_(True)"
    )


STAR_IMPORTS = """from ding.utils import *
from ding.envs import *


def setup(seed, cfg):
    set_pkg_seed(seed)  # DI-engine's ding.utils has it; ding_env.utils does not
    return deep_merge_dicts({}, cfg), BaseEnvTimestep, ENV_REGISTRY
"""


def test_names_a_renamed_star_import_no_longer_brings_are_errors_at_their_use(tmp_path):
    (tmp_path / "star.py").write_text(STAR_IMPORTS)
    code, report = port_json("star.py", "--out", "port/star.py", cwd=tmp_path)
    assert code == 1
    found = [(item["where"], item["severity"], item["what"].split(":")[0]) for item in report["items"]]
    assert found == [("star.py:6", "error", "set_pkg_seed")]  # the other names ding_env brings
    assert "from ding.utils import set_pkg_seed" in report["items"][0]["fix"]


@pytest.mark.parametrize(
    "declared, body",
    [
        ("cp932", b'x = "\x87\x90 \xfa\x5c"\n'),  # characters cp932 spells two ways: decoding would respell them
        ("utf-16", b'x = "caf\xc3\xa9"\n'),  # a codec that cannot read the file it declares
        ("rot13", b"x = 1\n"),  # a text transform, not a source encoding
    ],
)
def test_a_file_its_declared_codec_would_not_give_back_byte_for_byte_keeps_every_other_byte(tmp_path, declared, body):
    source = f"# -*- coding: {declared} -*-\n".encode() + b"from ding.envs import BaseEnv\n" + body
    (tmp_path / "odd.py").write_bytes(source)
    _, report = port_json("odd.py", "--out", "port/odd.py", cwd=tmp_path)
    assert (tmp_path / "port" / "odd.py").read_bytes() == source.replace(b"ding.envs", b"ding_env")
    assert report["renamed"], report


def test_star_imports_with_a_relative_one_beside_and_implicit_names_report_nothing(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "helpers.py").write_text("def helper_fn():\n    return 1\n")
    (tmp_path / "pkg" / "uses.py").write_text(
        "from ding.utils import *\nfrom .helpers import *\n\n\n"
        "class A:\n    where = __module__\n\n    def kind(self):\n        return __class__, helper_fn()\n"
    )
    code, report = port_json("pkg", "--out", "port/pkg", cwd=tmp_path)
    assert code == 0 and report["items"] == [], report["items"]


def test_rename_imports_keeps_line_endings():
    source = "from ding.envs import BaseEnv\r\nimport ding.torch_utils as tu\rfrom dingo import x\n"
    assert (
        rename_imports(source) == "from ding_env import BaseEnv\r\nimport ding_env.utils as tu\rfrom dingo import x\n"
    )


def test_in_place_keeps_the_first_original(tmp_path):
    module = tmp_path / "my_env.py"
    module.write_bytes(ENV_MODULE)
    assert ding_env_port("my_env.py", "--in-place", cwd=tmp_path).returncode == 0
    assert b"from ding_env import" in module.read_bytes()
    assert (tmp_path / "my_env.py.orig").read_bytes() == ENV_MODULE
    assert ding_env_port("my_env.py", "--in-place", cwd=tmp_path).returncode == 0
    assert (tmp_path / "my_env.py.orig").read_bytes() == ENV_MODULE
    assert (tmp_path / "my_env.PORTING.md").exists()  # a file's report is named after it


def test_help_and_usage_errors(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    usage = subprocess.run(
        [sys.executable, "-m", "ding_env.porting", "--help"], env=env, capture_output=True, text=True
    )
    assert usage.returncode == 0 and "--in-place" in usage.stdout and "--try" in usage.stdout
    assert "examples:" in usage.stdout
    missing = ding_env_port("nowhere", "--out", "x", cwd=tmp_path)
    assert missing.returncode == 2 and b"'nowhere' does not exist" in missing.stderr
    (tmp_path / "a.py").write_text("x = 1\n")
    neither = ding_env_port("a.py", cwd=tmp_path)
    assert neither.returncode == 2 and b"--out DST" in neither.stderr
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x = 1\n")
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "mine.txt").write_text("keep me\n")
    taken = ding_env_port("src", "--out", "taken", cwd=tmp_path)
    assert taken.returncode == 2 and b"holds files a port did not write" in taken.stderr


NAMES_AND_HAZARDS = """import gym
import gymnasium
import numpy as np
from ding.envs import BaseEnv, PoolEnvManagerV2
from ding.envs.common import NoSuchHelper
from ding.policy import DQNPolicy
from ding.utils import POLICY_REGISTRY
from pettingzoo.mpe import simple_spread_v3


class MyEnv(BaseEnv):
    def __init__(self, cfg):
        self._env = gym.make("CartPole-v1")
        self._sim = gymnasium.make("CartPole-v1")
        self._low = self._sim.reward_range[0]

    def reset(self):
        self._env.seed(0)
        obs = self._env.reset()
        return obs.astype(np.float_)

    def step(self, action):
        obs, reward, done, info = self._env.step(action)
        rew = np.array([reward]).astype(np.float32)
        self._return = float(rew) + np.NINF * 0
        return obs, rew, done, info

    def agents(self):
        self._penv = simple_spread_v3.parallel_env(N=3)
        observations = self._penv.reset(seed=0)
        return observations


manager = dict(type="env_pool")
pong = dict(env_id="PongNoFrameskip-v4", env_wrapper="atari_default")
scaled = {"env_wrapper": "atari_default", "scale_obs": True}
breakout = {"env_wrapper": "atari_default"}
"""


def test_the_report_names_each_gap_and_hazard_with_its_line_and_fix(tmp_path):
    (tmp_path / "my_env.py").write_text(NAMES_AND_HAZARDS)
    code, report = port_json("my_env.py", "--out", "port/my_env.py", cwd=tmp_path)
    assert code == 1  # a name the rename does not bring, and numpy names numpy 2 removed
    found = {(item["where"], item["severity"], item["what"].split(":")[0]) for item in report["items"]}
    assert ("my_env.py:4", "error", "ding.envs.PoolEnvManagerV2") in found  # not in ding-env yet
    assert ("my_env.py:5", "error", "ding.envs.common.NoSuchHelper") in found  # an env-layer name ding_env lacks
    assert ("my_env.py:6", "note", "ding.policy.DQNPolicy") in found  # outside the env layer
    assert ("my_env.py:7", "note", "ding.utils.POLICY_REGISTRY") in found
    assert ("my_env.py:8", "error", "pettingzoo.mpe") in found
    assert ("my_env.py:15", "warning", "`.reward_range`") in found
    assert ("my_env.py:18", "warning", "`self._env.seed()`") in found
    assert ("my_env.py:19", "warning", "`obs = self._env.reset()`") in found
    assert ("my_env.py:20", "error", "np.float_") in found
    assert ("my_env.py:23", "warning", "`(obs, reward, done, info) = ...step()`") in found
    assert ("my_env.py:25", "warning", "`float(rew)`") in found
    assert ("my_env.py:25", "error", "np.NINF") in found
    assert ("my_env.py:30", "warning", "`observations = self._penv.reset(seed=0)`") in found  # PettingZoo's
    assert not any(where == "my_env.py:34" for where, _, _ in found)  # DI-engine's env_pool type is ding-env's too
    # DI-engine's Atari preset scaled its frames to [0, 1]; ding-env's does with scale_obs=True only.
    uint8 = {where for where, severity, what in found if what.startswith("env_wrapper='atari_default' gives uint8")}
    assert uint8 == {"my_env.py:35", "my_env.py:37"}
    assert all(item["fix"] for item in report["items"])
    assert report["fixed"] == []


MIXED_IMPORTS = """from ding.utils import ENV_REGISTRY, set_pkg_seed  # one line, two kinds of names
from ding.utils import (
    ENV_REGISTRY as REGISTRY,
    to_device,
)
import os; from ding.utils import get_rank


def policies():
    from ding.utils import POLICY_REGISTRY
"""


def test_names_outside_the_env_layer_keep_importing_from_di_engine(tmp_path):
    (tmp_path / "mixed.py").write_text(MIXED_IMPORTS)
    code, report = port_json("mixed.py", "--out", "port/mixed.py", cwd=tmp_path)
    ported = (tmp_path / "port" / "mixed.py").read_text().splitlines()
    assert ported[0] == (
        "from ding_env.utils import ENV_REGISTRY; from ding.utils import set_pkg_seed  # one line, two kinds of names"
    )
    assert ported[9] == "    from ding.utils import POLICY_REGISTRY"  # no name of it moves: the line stays
    found = {(item["where"], item["severity"], item["what"].split(":")[0]) for item in report["items"]}
    assert ("mixed.py:1", "note", "ding.utils.set_pkg_seed") in found
    assert ("mixed.py:10", "note", "ding.utils.POLICY_REGISTRY") in found
    # A statement over several lines is renamed whole: to_device would then be imported from ding_env.
    assert ported[1] == "from ding_env.utils import ("
    assert ("mixed.py:2", "error", "ding.utils.to_device") in found and code == 1
    # A statement sharing its line with another is planned on its own: get_rank stays, as written.
    assert ported[5] == "import os; from ding.utils import get_rank"
    assert ("mixed.py:6", "note", "ding.utils.get_rank") in found


def test_fix_applies_what_is_sure_and_lists_each_change(tmp_path):
    (tmp_path / "my_env.py").write_text(NAMES_AND_HAZARDS)
    _, report = port_json("my_env.py", "--out", "port/my_env.py", "--fix", cwd=tmp_path)
    ported = (tmp_path / "port" / "my_env.py").read_text().splitlines()
    assert ported[7] == "from mpe2 import simple_spread_v3"
    assert ported[14] == '        self._low = (-float("inf"), float("inf"))[0]'  # made by Gymnasium: no reward_range
    assert ported[19] == "        return obs.astype(np.float64)"
    assert ported[24] == "        self._return = float(rew.item()) + (-np.inf) * 0"
    assert [change["where"] for change in report["fixed"]] == [
        "my_env.py:8",
        "my_env.py:15",
        "my_env.py:20",
        "my_env.py:25",
    ]
    left = {item["what"].split(":")[0] for item in report["items"]}
    assert not left & {"np.float_", "np.NINF", "pettingzoo.mpe", "`float(rew)`", "`.reward_range`"}
    assert "`self._env.seed()`" in left  # not mechanical: reported, not changed
    assert ported[17] == "        self._env.seed(0)"


BROKEN_PACKAGE = {
    "__init__.py": "from .walk_env import WalkEnv\n",
    "walk_env.py": """import gymnasium as gym
import numpy as np
from ding.envs import BaseEnv, BaseEnvTimestep
from ding.utils import ENV_REGISTRY


@ENV_REGISTRY.register("porting_walk")
class WalkEnv(BaseEnv):
    def __init__(self, cfg):
        self._cfg = cfg
        self._size = cfg.size

    def seed(self, seed, dynamic_seed=True):
        self._rng = np.random.default_rng(seed)

    def reset(self):
        self._t = 0
        return np.zeros(self._size, np.float32)

    def step(self, action):
        self._t += 1
        reward = np.array([1.0], np.float32)
        done = self._t >= 5
        info = {"eval_episode_return": float(self._t)} if done else {}
        return BaseEnvTimestep(np.zeros(self._size, np.float64), reward, done, info)

    def close(self):
        pass

    def __repr__(self):
        return "WalkEnv"

    @property
    def observation_space(self):
        return gym.spaces.Box(0.0, 1.0, (self._size,), np.float32)

    @property
    def action_space(self):
        return gym.spaces.Discrete(2)

    @property
    def reward_space(self):
        return gym.spaces.Box(0.0, 1.0, (1,), np.float32)
""",
    # An env class registered under no type: run from no config, so not tried, and the report says so.
    "hidden_env.py": """from walk_pkg.walk_env import WalkEnv


class HiddenWalkEnv(WalkEnv):
    pass
""",
    "config/walk_config.py": """main_config = dict(
    env=dict(collector_env_num=2, evaluator_env_num=1, size=3), policy=dict(cuda=False)
)
create_config = dict(env=dict(type='porting_walk', import_names=['walk_pkg.walk_env']), policy=dict(type='dqn'))
""",
}


def test_try_runs_each_env_and_traces_a_refused_observation_to_the_declared_space(tmp_path):
    for name, text in BROKEN_PACKAGE.items():
        (tmp_path / "walk_pkg" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "walk_pkg" / name).write_text(text)
    code, report = port_json("walk_pkg", "--out", "ported/walk_pkg", "--try", "--steps", "20", cwd=tmp_path)
    assert code == 1
    (env,) = report["trial"]["envs"]
    assert env["type"] == "porting_walk" and env["config"] == "config/walk_config.py" and env["run_accepts_config"]
    for manager in ("base", "subprocess"):  # step obs float64 against a float32 space: the managers refuse it
        assert "step obs must have dtype float32, got float64" in env[manager]["error"]
        assert env[manager]["where"] == "walk_env.py:35"  # the declaration, the line to change
    assert any("float64" in error for error in env["check"]["errors"])
    assert report["trial"]["unregistered"] == ["walk_pkg.hidden_env:HiddenWalkEnv"]  # it passed unmentioned
    fixed = (tmp_path / "ported" / "walk_pkg" / "walk_env.py").read_text().replace("np.float64", "np.float32")
    (tmp_path / "ported" / "walk_pkg" / "walk_env.py").write_text(fixed)
    code, report = port_json("ported/walk_pkg", "--in-place", "--try", "--steps", "20", cwd=tmp_path)
    (env,) = report["trial"]["envs"]
    assert code == 0 and env["base"] == {"steps": 20, "episodes": 4} and env["subprocess"] == env["base"]


def test_the_summary_counts_the_checkers_errors_of_envs_that_run(tmp_path):
    # An env that runs but seeds numpy's global RNG: the report listed the checker's errors under the env and
    # its summary still said "nothing failed".
    walk_env = BROKEN_PACKAGE["walk_env.py"].replace("np.float64", "np.float32")
    walk_env = walk_env.replace("        self._rng = np.random.default_rng(seed)\n", "        np.random.seed(seed)\n")
    for name, text in {**BROKEN_PACKAGE, "walk_env.py": walk_env}.items():
        (tmp_path / "walk_pkg" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "walk_pkg" / name).write_text(text)
    code, report = port_json("walk_pkg", "--out", "ported/walk_pkg", "--try", "--steps", "20", cwd=tmp_path)
    (env,) = report["trial"]["envs"]
    assert code == 0 and env["base"] == {"steps": 20, "episodes": 4}  # it runs: the port did not fail
    assert any("global" in error for error in env["check"]["errors"])
    errors = counted(len(env["check"]["errors"]), "error")
    summary = (tmp_path / "ported" / "walk_pkg" / "PORTING.md").read_text().split("\n## ")[0]
    assert f"| result | nothing failed; `ding-env check --di-engine` found {errors} in 1 env (listed" in summary


def test_an_env_module_that_needs_di_engine_beyond_the_env_layer_fails_the_trial(tmp_path):
    # It was noted as "imports DI-engine beyond the env layer (not a failure)": no module imported, no env ran,
    # and the port said "nothing failed" (exit 0).
    walk_env = BROKEN_PACKAGE["walk_env.py"].replace("np.float64", "np.float32")
    walk_env = walk_env.replace(
        "from ding.utils import ENV_REGISTRY\n", "from ding.utils import ENV_REGISTRY, set_pkg_seed\n"
    )
    (tmp_path / "walk_env.py").write_text(walk_env)
    code, report = port_json("walk_env.py", "--out", "ported/walk_env.py", "--try", "--steps", "5", cwd=tmp_path)
    result = report["trial"]["imports"]["walk_env"]
    assert code == 1 and "outside" not in result and "No module named 'ding'" in result["error"]
    assert result["fix"].startswith("this module registers env types, so it must import without DI-engine")
    assert any(failure.startswith("import walk_env: ModuleNotFoundError") for failure in report["failures"])


@pytest.mark.parametrize("flag", ["--try", "--fix"])
def test_the_port_of_a_folder_that_imports_itself_elsewhere_says_so(tmp_path, flag):
    (tmp_path / "walk_pkg").mkdir()
    (tmp_path / "walk_pkg" / "__init__.py").write_text("")
    code, report = port_json("walk_pkg", "--out", "elsewhere", flag, cwd=tmp_path)
    assert code == 0 and report["failures"] == []
    if flag == "--try":
        assert "port it to a folder whose path ends in walk_pkg" in report["trial"]["note"]


PLAIN_IMPORTS = """import ding.envs
import ding.envs.gym_env
import ding.utils
env_cls = ding.envs.BaseEnv
make = ding.envs.gym_env.env
"""


def test_a_plain_import_of_a_renamed_module_renames_its_dotted_uses(tmp_path):
    (tmp_path / "uses.py").write_text(PLAIN_IMPORTS)
    code, report = port_json("uses.py", "--out", "port/uses.py", cwd=tmp_path)
    assert code == 0 and report["items"] == [], report["items"]
    assert (tmp_path / "port" / "uses.py").read_text().splitlines() == [
        "import ding_env",
        "import ding_env.gym_env",
        "import ding_env.utils",
        "env_cls = ding_env.BaseEnv",
        "make = ding_env.gym_env.env",  # the longest renamed module the spelling starts with
    ]


def test_a_ported_plain_import_of_ding_envs_reaches_its_gym_env_module(tmp_path):
    (tmp_path / "make.py").write_text("import ding.envs\nenv = ding.envs.gym_env.env({'env_id': 'CartPole-v1'})\n")
    code, report = port_json("make.py", "--out", "port/make.py", cwd=tmp_path)
    assert code == 0 and report["items"] == [], report["items"]
    ran = subprocess.run([sys.executable, "port/make.py"], cwd=tmp_path, capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr  # import ding_env binds ding_env.gym_env, as import ding.envs does


SCOPED_USES = """import functools
import ding.envs


def own(ding):  # a parameter: this function's ding is not the module
    return ding.envs


def make():
    def helper():
        ding = 1  # helper's own, not make's
        return ding

    names = [ding for ding in ("a", "b")]  # the comprehension's own
    return ding.envs.DingEnvWrapper, helper(), names


@functools.lru_cache(maxsize=len(ding.envs.BaseEnv.__name__))  # decorators, defaults and annotations run outside
def build(ding, cls=ding.envs.DingEnvWrapper) -> ding.envs.BaseEnv:
    return cls


def module_ding():
    ding = 1  # this function's own, and below the module's again

    def inner():
        global ding
        return ding.envs.BaseEnv

    return inner()


class Holder:
    ding = "a class attribute"  # the class body's own: its methods see the module's

    def make(self):
        return ding.envs.BaseEnv


def walrus():
    names = [(ding := name) for name in ("walrus",)]  # binds walrus's ding, not the comprehension's
    return ding, names


print(own(type("Fake", (), {"envs": "own"})), make()[0].__name__, build(0).__name__, module_ding().__name__)
print(f"{ding.envs.BaseEnv.__name__}", Holder().make().__name__, walrus()[0])
"""


def test_the_module_s_ding_is_renamed_in_every_scope_and_a_scope_s_own_ding_is_left(tmp_path):
    (tmp_path / "scoped.py").write_text(SCOPED_USES)
    code, report = port_json("scoped.py", "--out", "port/scoped.py", cwd=tmp_path)
    assert code == 0 and report["items"] == [], report["items"]
    assert "    return ding.envs\n" in (tmp_path / "port" / "scoped.py").read_text()
    ran = subprocess.run([sys.executable, "port/scoped.py"], cwd=tmp_path, capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == ["own DingEnvWrapper DingEnvWrapper BaseEnv", "BaseEnv BaseEnv walrus"]


DOTTED_USES_LEFT = """import ding.envs
env_cls = ding.envs.NoSuchThing
tags = [ding for ding in ("a", "b")]  # binds ding in the comprehension only
set_seed = ding.utils.set_pkg_seed
wrappers = ding.envs.env.no_such_module.get_default_wrappers
del ding


class Mixed:
    base = ding.envs.BaseEnv  # the module's, read before the class's own
    ding = "mine"
"""


def test_dotted_uses_the_rename_cannot_carry_are_reported(tmp_path):
    (tmp_path / "uses.py").write_text(DOTTED_USES_LEFT)
    code, report = port_json("uses.py", "--out", "port/uses.py", cwd=tmp_path)
    ported = (tmp_path / "port" / "uses.py").read_text().splitlines()
    assert ported[:2] == ["import ding_env", "env_cls = ding_env.NoSuchThing"]
    found = {item["line"]: item for item in report["items"] if item["severity"] == "error"}
    assert sorted(found) == [2, 4, 5, 6], report["items"]
    assert "`ding`: the name `ding` is no longer bound" in found[6]["what"]  # del ding
    [mixed] = [item for item in report["items"] if item["severity"] == "warning"]
    assert mixed["line"] == 9 and "class Mixed assigns `ding` and reads it in its body" in mixed["what"]
    assert "`ding.envs.NoSuchThing`: missing" in found[2]["what"]
    assert (
        "`ding.utils.set_pkg_seed`: the name `ding` is no longer bound once `import ding.envs` is" in found[4]["what"]
    )
    assert "import ding.utils" in found[4]["fix"]
    assert "`ding.envs.env.no_such_module`: missing" in found[5]["what"]  # past the first attribute


def test_a_dotted_use_split_over_lines_is_left_with_a_warning(tmp_path):
    (tmp_path / "split.py").write_text("import ding.envs.gym_env\nmake = (ding.envs\n        .gym_env.env)\n")
    code, report = port_json("split.py", "--out", "port/split.py", cwd=tmp_path)
    assert code == 0
    assert (tmp_path / "port" / "split.py").read_text().splitlines()[1:] == [
        "make = (ding.envs",
        "        .gym_env.env)",
    ]
    [warning] = report["items"]
    assert warning["severity"] == "warning" and "ding_env.gym_env" in warning["fix"], warning


def ported_warnings(tmp_path: Path, name: str, source: str) -> list[tuple[str, str]]:
    """``(where, what it names)`` of each warning of the port of the file ``name`` holding ``source``."""
    (tmp_path / name).write_text(source)
    _, report = port_json(name, "--out", f"port/{name}", cwd=tmp_path)
    return [(item["where"], item["what"].split(":")[0]) for item in report["items"] if item["severity"] == "warning"]


WRAPPED_GYM_ENVS = """import gym
from ding.envs import DingEnvWrapper

env = DingEnvWrapper(gym.make('CartPole-v0'))
env.seed(314)
obs = env.reset()
obs, rew, done, info = env.step(env.random_action())
raw = gym.make('CartPole-v0')
raw.seed(1)
"""


def test_gym_envs_inside_a_ding_env_wrapper_are_not_taken_for_gym_envs(tmp_path):
    # DingEnvWrapper has seed() and DI-engine's 4-field step.
    assert ported_warnings(tmp_path, "wrapped.py", WRAPPED_GYM_ENVS) == [("wrapped.py:9", "`raw.seed()`")]


GYM_WRAPPER_OVER_GYM_ENV = """import gym
from ding.envs import ClipRewardWrapper, DingEnvWrapper as Wrap
clipped = ClipRewardWrapper(gym.make('CartPole-v0'))
clipped.seed(1)
wrapped = Wrap(gym.make('CartPole-v0'))
wrapped.seed(2)
"""


def test_a_gym_env_in_a_gym_wrapper_of_ding_env_is_still_a_gym_env(tmp_path):
    warnings = ported_warnings(tmp_path, "clipped.py", GYM_WRAPPER_OVER_GYM_ENV)
    assert warnings == [("clipped.py:4", "`clipped.seed()`")]  # ClipRewardWrapper keeps the gym env's API


def test_a_port_of_dizoo_packages_keeps_the_built_in_envs_and_tries_the_modules_it_replaces(tmp_path):
    # DI-engine's bipedalwalker module, ported as a tree from dizoo/ down: the names of ding-env's own.
    walk = BROKEN_PACKAGE["walk_env.py"].replace("np.float64", "np.float32")
    walk = walk.replace('"porting_walk"', '"bipedalwalker"').replace("WalkEnv", "BipedalWalkerEnv")
    files = {"__init__.py": "", "box2d/__init__.py": "", "box2d/bipedalwalker/__init__.py": ""}
    files["box2d/bipedalwalker/envs/__init__.py"] = "from .bipedalwalker_env import BipedalWalkerEnv\n"
    files["box2d/bipedalwalker/envs/bipedalwalker_env.py"] = walk.replace("cfg.size", "cfg.get('size', 3)")
    for name, text in files.items():
        (tmp_path / "src" / "dizoo" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / "dizoo" / name).write_text(text)
    code, report = port_json("src/dizoo", "--out", "ported/dizoo", "--try", "--steps", "10", cwd=tmp_path)
    assert code == 0, report["failures"]
    assert report["joined"] == sorted(files)[:-1]  # every __init__.py: packages ding-env's dizoo has too
    (env,) = report["trial"]["envs"]  # the port's class, registered under the built-in's own path
    assert env["type"] == "bipedalwalker" and env["base"] == {"steps": 10, "episodes": 2}
    module = report["trial"]["imports"]["dizoo.box2d.bipedalwalker.envs.bipedalwalker_env"]
    assert "ding-env's own dizoo has a module of this name" in module["replaces"]
    # From the port's root, ding-env's other built-in envs still import, beside the port's module.
    probe = "import dizoo.classic_control.cartpole.envs, dizoo.box2d.bipedalwalker.envs.bipedalwalker_env as m\n"
    probe += "print(m.__file__)"
    root = tmp_path / "ported"
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=root,
        env={**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{REPO}"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert (
        Path(done.stdout.strip()).resolve() == (root / "dizoo/box2d/bipedalwalker/envs/bipedalwalker_env.py").resolve()
    )


def test_a_name_missing_from_ding_envs_own_dizoo_module_is_explained(tmp_path):
    # DI-engine's pistonball imports a helper from its simple_spread module by absolute name: the import lands on
    # ding-env's own module of that name, and the report gave the bare ImportError.
    (tmp_path / "pz" / "envs").mkdir(parents=True)
    (tmp_path / "pz" / "__init__.py").write_text("")
    (tmp_path / "pz" / "envs" / "__init__.py").write_text("")
    (tmp_path / "pz" / "envs" / "piston_env.py").write_text(
        "from dizoo.classic_control.cartpole.envs.cartpole_env import DIEngineOnlyHelper\n"
    )
    _, report = port_json("pz", "--out", "ported/pz", "--try", "--steps", "5", cwd=tmp_path)
    result = report["trial"]["imports"]["pz.envs.piston_env"]
    assert result["where"] == "envs/piston_env.py:1"
    assert result["fix"].startswith(
        "dizoo.classic_control.cartpole.envs.cartpole_env is ding-env's own module of that name, not the port's"
    )
    assert "it has no DIEngineOnlyHelper: port the whole dizoo/ tree" in result["fix"]


def test_a_port_named_as_an_installed_package_is_said_to_hide_it(tmp_path):
    # DI-engine's mujoco package ported as `mujoco` hides the MuJoCo bindings gym imports; --try said nothing of it.
    (tmp_path / "pandas").mkdir()
    (tmp_path / "pandas" / "__init__.py").write_text("")
    (tmp_path / "pandas" / "frames.py").write_text("ROWS = 3\n")
    done = ding_env_port("pandas", "--out", "ported/pandas", "--try", "--steps", "5", cwd=tmp_path)
    assert json.loads(ding_env_port("pandas", "--out", "ported2/pandas", "--try", "--json", cwd=tmp_path).stdout)[
        "trial"
    ]["hides"] == ["pandas"]
    assert b"The port's package `pandas` has the name of an installed package, which it hides" in done.stdout


def test_a_missing_ditk_names_the_package_that_provides_it(tmp_path):
    # DI-engine's taxi and sokoban import DI-toolkit's ditk: "install the package that provides it" named none.
    (tmp_path / "taxi_pkg").mkdir()
    (tmp_path / "taxi_pkg" / "__init__.py").write_text("")
    (tmp_path / "taxi_pkg" / "taxi_env.py").write_text("from ditk import logging\n")
    _, report = port_json("taxi_pkg", "--out", "ported/taxi_pkg", "--try", "--steps", "5", cwd=tmp_path)
    assert report["trial"]["imports"]["taxi_pkg.taxi_env"]["fix"].endswith("pip install DI-toolkit")

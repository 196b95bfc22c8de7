"""`ding-env port`: what each DI-engine import becomes, written and reported alike, relative ones and strings too."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ding_env.porting import port
from tests.porting.test_port import REPO, port_json
from tests.support import di_engine_dizoo

SAME_LINE = "from ding.envs import BaseEnv; from ding.utils import set_pkg_seed as sps\n"


def test_statements_sharing_a_line_are_written_and_reported_alike(tmp_path):
    (tmp_path / "one.py").write_text(
        SAME_LINE + "from ding.utils import set_pkg_seed; from ding.envs import BaseEnvTimestep\n"
    )
    code, report = port_json("one.py", "--out", "port/one.py", cwd=tmp_path)
    assert (tmp_path / "port" / "one.py").read_text().splitlines() == [
        "from ding_env import BaseEnv; from ding.utils import set_pkg_seed as sps",
        "from ding.utils import set_pkg_seed; from ding_env import BaseEnvTimestep",  # the second statement renamed too
    ]
    assert code == 0 and report["failures"] == []
    assert {(item["where"], item["severity"]) for item in report["items"]} == {
        ("one.py:1", "note"),
        ("one.py:2", "note"),
    }


ENV_LAYER_AND_TRAINING = """from ding import envs
from ding import envs as dienvs, policy, torch_utils
from ding.framework.supervisor import ChildType
from ding.utils import DDPContext, DistContext, to_ddp_config
from ding.torch_utils import DataParallel
from ding.utils.data import default_collate
"""


def test_training_utilities_stay_on_di_engine_and_env_layer_modules_move(tmp_path):
    (tmp_path / "uses.py").write_text(ENV_LAYER_AND_TRAINING)
    code, report = port_json("uses.py", "--out", "port/uses.py", cwd=tmp_path)
    ported = (tmp_path / "port" / "uses.py").read_text().splitlines()
    assert ported[:3] == [
        "import ding_env as envs",
        "from ding_env import utils as torch_utils; import ding_env as dienvs; from ding import policy",
        "from ding_env.env_manager.env_supervisor import ChildType",
    ]
    assert ported[3:] == ENV_LAYER_AND_TRAINING.splitlines()[3:]  # training utilities: left on DI-engine
    assert code == 0, report["failures"]
    notes = {item["what"].split(":")[0] for item in report["items"] if item["severity"] == "note"}
    assert notes == {
        "ding.policy",
        "ding.utils.DDPContext, ding.utils.DistContext",
        "ding.utils.to_ddp_config",
        "ding.torch_utils.DataParallel",
        "ding.utils.data.default_collate",
    }
    # What moved imports with ding_env alone (DI-engine is not installed beside it here).
    moved = (
        "\n".join(line.split("; from ding ")[0] for line in ported[:3]) + "\nprint(envs.BaseEnv, ChildType.THREAD)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", moved], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "ding_env.env.base_env.BaseEnv" in done.stdout, done.stderr


KEPT_DING = """import ding.policy  # binds ding, as import ding does
from ding.policy import DQNPolicy


@ding.utils.ENV_REGISTRY.register("reg_toy")
class Toy:
    step = ding.envs.BaseEnvTimestep, ding.policy.DQNPolicy
"""


def test_env_layer_names_reached_through_a_kept_import_ding_are_reported_with_ding_envs_name(tmp_path):
    (tmp_path / "reg.py").write_text(KEPT_DING)
    code, report = port_json("reg.py", "--out", "port/reg.py", cwd=tmp_path)
    assert code == 1
    found = {(item["where"], item["severity"], item["what"].split(":")[0], item["fix"]) for item in report["items"]}
    assert {item for item in found if item[1] != "note"} == {
        (
            "reg.py:5",
            "error",
            "ding.utils.ENV_REGISTRY.register",
            "import ding_env and write ding_env.utils.ENV_REGISTRY",
        ),
        ("reg.py:7", "warning", "ding.envs.BaseEnvTimestep", "import ding_env and write ding_env.BaseEnvTimestep"),
    }


HOMES_MOVED = """from ding.envs.env.base_env import BaseEnv, get_env_cls, get_vec_env_setting
WRAPPER = "ding.envs.env.ding_env_wrapper.DingEnvWrapper"
"""


def test_names_ding_env_keeps_in_another_module_are_imported_from_it_in_code_and_strings(tmp_path):
    (tmp_path / "homes.py").write_text(HOMES_MOVED)
    code, report = port_json("homes.py", "--out", "port/homes.py", cwd=tmp_path)
    assert code == 0 and report["items"] == [], report["items"]
    assert (tmp_path / "port" / "homes.py").read_text().splitlines() == [
        "from ding_env.env.base_env import BaseEnv; from ding_env.registry import get_env_cls, get_vec_env_setting",
        'WRAPPER = "ding_env.env.ding_env_wrapper.DingEnvWrapper"',
    ]
    check = "import homes, importlib; module, _, name = homes.WRAPPER.rpartition('.'); "
    check += "print(getattr(importlib.import_module(module), name).__name__, homes.get_env_cls.__module__)"
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{tmp_path / 'port'}"}
    done = subprocess.run([sys.executable, "-c", check], env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["DingEnvWrapper", "ding_env.registry"], done.stderr


@pytest.mark.parametrize("package", ["classic_control/cartpole", "atari"])
def test_di_engines_dizoo_trees_port_with_no_name_missing(package, tmp_path):
    result = port(di_engine_dizoo() / package, tmp_path / "port")
    errors = [
        f"{item.where}: {item.what}" for item in result.items if item.severity == "error" and item.kind == "names"
    ]
    assert errors == []


# ding/envs/env_manager/tests/test_subprocess_env_manager.py and ding/envs/env/tests/test_ding_env_wrapper.py, cut.
RELATIVE_TEST = """import pytest
from ..base_env_manager import EnvState
from ..subprocess_env_manager import AsyncSubprocessEnvManager, SyncSubprocessEnvManager
from .conftest import setup_manager_cfg
"""
ENTRY_POINT_TEST = """import gym
gym.register(id="FakeEnvForTest-v0", entry_point="ding.envs.env.tests.test_ding_env_wrapper:FakeEnvForTest")
gym.register(id="Wrapped-v0", entry_point='ding.envs.env.ding_env_wrapper:DingEnvWrapper')
"""


def test_relative_imports_out_of_a_copied_tests_folder_are_errors_naming_the_module(tmp_path):
    files = {"__init__.py": "", "conftest.py": "setup_manager_cfg = {}\n", "test_subprocess_env_manager.py": ""}
    files["test_subprocess_env_manager.py"] = RELATIVE_TEST
    files["test_ding_env_wrapper.py"] = ENTRY_POINT_TEST
    for name, text in files.items():
        (tmp_path / "tests_src" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "tests_src" / name).write_text(text)
    code, report = port_json("tests_src", "--out", "ported/tests_src", cwd=tmp_path)
    errors = {item["where"]: item for item in report["items"] if item["severity"] == "error"}
    assert code == 1 and sorted(errors) == [
        "test_ding_env_wrapper.py:2",
        "test_subprocess_env_manager.py:2",
        "test_subprocess_env_manager.py:3",
    ]  # `from .conftest` stays inside the port: fine
    assert "climbs above the top-level package" in errors["test_subprocess_env_manager.py:2"]["what"]
    assert (
        "`from ding_env.env_manager.base_env_manager import EnvState`"
        in errors["test_subprocess_env_manager.py:2"]["fix"]
    )
    entry = errors["test_ding_env_wrapper.py:2"]
    assert "ding_env does not have" in entry["what"]
    assert "'tests_src.test_ding_env_wrapper:FakeEnvForTest'" in entry["fix"]  # the port's own module
    # An entry point of a module the rename brings is renamed with it.
    ported = (tmp_path / "ported" / "tests_src" / "test_ding_env_wrapper.py").read_text().splitlines()
    assert ported[2] == "gym.register(id=\"Wrapped-v0\", entry_point='ding_env.env.ding_env_wrapper:DingEnvWrapper')"
    assert "test_ding_env_wrapper.py:3" in [change["where"] for change in report["renamed"]]


def test_relative_imports_out_of_di_engines_own_tree_become_ding_env_imports(tmp_path):
    # A folder whose package chain is DI-engine's: ding/envs/env_manager/tests.
    tests = tmp_path / "src" / "ding" / "envs" / "env_manager" / "tests"
    tests.mkdir(parents=True)
    for folder in (tests, *list(tests.parents)[:3]):
        (folder / "__init__.py").write_text("")
    (tests / "conftest.py").write_text("setup_manager_cfg = {}\n")
    (tests / "test_subprocess_env_manager.py").write_text(RELATIVE_TEST)
    code, report = port_json(str(tests), "--out", "ported/tests", cwd=tmp_path)
    ported = (tmp_path / "ported" / "tests" / "test_subprocess_env_manager.py").read_text().splitlines()
    assert ported[1:] == [
        "from ding_env.env_manager.base_env_manager import EnvState",
        "from ding_env.env_manager.subprocess_env_manager import AsyncSubprocessEnvManager, SyncSubprocessEnvManager",
        "from .conftest import setup_manager_cfg",
    ]
    assert code == 0 and report["failures"] == []


def test_a_name_di_engine_lacks_that_the_port_defines_is_imported_from_the_ports_module(tmp_path):
    # A copy of DI-engine's env tests: test_env_implementation_check imports DemoEnv from DI-engine's tests package.
    tests_folder = di_engine_dizoo().parent / "ding" / "envs" / "env" / "tests"
    (tmp_path / "env_tests").mkdir()
    for path in tests_folder.glob("*.py"):
        (tmp_path / "env_tests" / path.name).write_bytes(path.read_bytes())
    _, report = port_json("env_tests", "--out", "port/env_tests", cwd=tmp_path)
    [demo] = [item for item in report["items"] if "DemoEnv" in item["what"]]
    assert demo["where"] == "test_env_implementation_check.py:8" and demo["severity"] == "error"
    assert demo["fix"].startswith("the port defines DemoEnv in env_tests.demo_env: import it from there")

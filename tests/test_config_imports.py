"""A config in a package tree (a port of DI-engine's dizoo) gets its env modules from that tree, or says it does not."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from ding_env.config import load_config_file
from ding_env.errors import RegistryError
from ding_env.run_config import load_run_config

ENV_MODULE = """from ding_env import DingEnvWrapper
from ding_env.utils import ENV_REGISTRY


@ENV_REGISTRY.register("ported_cartpole")
class PortedCartPole(DingEnvWrapper):
    def __init__(self, cfg=None):
        super().__init__(cfg={"env_id": "CartPole-v1"})
"""
JOINED = "from pkgutil import extend_path\n__path__ = extend_path(__path__, __name__)\n"
CONFIG = "dizoo/classic_control/cartpole/config/ported_config.py"


@pytest.fixture
def port(tmp_path: Path) -> Path:
    """A port of a dizoo package beside ding-env's own: its env module has the name of a built-in one."""
    root = tmp_path / "ported"
    packages = ["dizoo", "dizoo/classic_control", "dizoo/classic_control/cartpole"]
    for package in [*packages, "dizoo/classic_control/cartpole/envs", "dizoo/classic_control/cartpole/config"]:
        (root / package).mkdir(parents=True)
        (root / package / "__init__.py").write_text(JOINED if package in packages else "")
    (root / "dizoo/classic_control/cartpole/envs/cartpole_env.py").write_text(ENV_MODULE)
    (root / CONFIG).write_text(
        "main_config = dict(env=dict(collector_env_num=1, evaluator_env_num=1))\n"
        "create_config = dict(env=dict(type='ported_cartpole', "
        "import_names=['dizoo.classic_control.cartpole.envs.cartpole_env']))\n"
    )
    return root


REPO = Path(__file__).resolve().parents[1]


def run(config: str, cwd: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "ding_env", "run", config, "--steps", "5", "--eval-episodes", "1"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}  # this tree's ding_env, not an installed one
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120, env=env)


def test_a_ported_config_run_from_elsewhere_says_its_env_module_comes_from_another_folder(port):
    done = run(f"ported/{CONFIG}", cwd=port.parent)
    assert done.returncode != 0  # ding-env's own cartpole_env registers no 'ported_cartpole'
    said = " ".join(done.stderr.split())
    assert "import_names 'dizoo.classic_control.cartpole.envs.cartpole_env' imports" in said
    assert f"not {port / 'dizoo/classic_control/cartpole/envs/cartpole_env.py'} beside the config" in said
    assert f"run from {port} (ding-env and python -m put the current folder first), or with PYTHONPATH={port}" in said


def test_a_ported_config_run_from_its_root_gets_the_ports_env_and_no_warning(port):
    done = run(CONFIG, cwd=port)
    assert done.returncode == 0, done.stderr
    assert "import_names" not in done.stderr


def package_tree(root: Path, package: str, init: str = "") -> Path:
    """``root/package`` with an env module and a config listing it; the config's path."""
    for folder in (package, f"{package}/config"):
        (root / folder).mkdir(parents=True)
        (root / folder / "__init__.py").write_text(init if folder == package else "")
    (root / package / "envs.py").write_text("")
    config = root / package / "config" / "conf.py"
    config.write_text(f"config = dict(env=dict(type='card_game', import_names=['{package}.envs']))\n")
    return config


def test_a_config_whose_package_is_not_on_sys_path_says_where_to_run_from(tmp_path, monkeypatch):
    config = package_tree(tmp_path / "project", "zoo_only_here")
    monkeypatch.chdir(tmp_path)
    with pytest.warns(UserWarning, match="imports nothing \\(its package is not on sys.path\\)") as warned:
        load_config_file(config)
    assert f"run from {tmp_path / 'project'}" in str(warned[0].message)


def test_a_package_that_fails_to_import_is_left_to_its_import_to_report(tmp_path, monkeypatch):
    config = package_tree(tmp_path, "zoo_that_raises", init="raise AttributeError('np.float was removed')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning either
        assert load_config_file(config).env.import_names == ["zoo_that_raises.envs"]


def test_import_names_are_checked_as_the_set_overrides_leave_them(tmp_path, monkeypatch):
    # The file's import_names would import nothing from here; --set drops them: nothing to warn about.
    config = package_tree(tmp_path / "project", "zoo_set_later")
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cfg = load_run_config(config, ["env.import_names=[]"])
    assert cfg.env.import_names == []


def test_import_names_a_set_override_brings_in_are_checked(tmp_path, monkeypatch):
    config = package_tree(tmp_path / "project", "zoo_set_only")
    config.write_text("config = dict(env=dict(type='card_game'))\n")
    monkeypatch.chdir(tmp_path)
    with pytest.warns(UserWarning, match="imports nothing \\(its package is not on sys.path\\)"):
        with pytest.raises(RegistryError, match="cannot import 'zoo_set_only.envs'"):  # the warning said why
            load_run_config(config, ["env.import_names=['zoo_set_only.envs']"])


def test_a_package_whose_dependency_is_missing_is_left_to_its_import_to_report(tmp_path, monkeypatch):
    # Not "its package is not on sys.path": it is, and importing it names the missing dependency.
    config = package_tree(tmp_path, "zoo_needs_rockets", init="import rocket_recycling_not_installed\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_config_file(config).env.import_names == ["zoo_needs_rockets.envs"]


def test_a_script_run_from_the_trees_root_is_not_told_to_run_from_there(port, tmp_path):
    """A script's sys.path starts at its own folder, not the current one: "run from ROOT" was said to a user there."""
    script = tmp_path / "scripts" / "load.py"
    script.parent.mkdir()
    script.write_text(f"from ding_env.config import load_config_file\nload_config_file({CONFIG!r})\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, str(script)], cwd=port, capture_output=True, text=True, timeout=120, env=env)
    said = " ".join(done.stderr.split())
    assert done.returncode == 0 and "import_names 'dizoo.classic_control.cartpole.envs.cartpole_env' imports" in said
    assert "run from" not in said
    assert "it is the current folder, but not on sys.path (a script gets its own folder there" in said
    assert f"run with ding-env or python -m, or set PYTHONPATH={port}" in said

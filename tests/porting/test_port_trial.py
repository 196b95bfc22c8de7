"""`ding-env port --try` on an env whose config `ding-env run` refuses: the envs are built as run builds them."""

from __future__ import annotations

import os
import subprocess
import sys

from ding_env.porting.discovery import module_names
from tests.porting.test_port import BROKEN_PACKAGE, REPO, port_json

# An env whose class declares its config: it reads `scale` from its class defaults, which the config leaves out.
DECLARED_ENV = (
    BROKEN_PACKAGE["walk_env.py"]
    .replace("np.float64", "np.float32")
    .replace("class WalkEnv(BaseEnv):\n", "class WalkEnv(BaseEnv):\n    config = dict(size=3, scale=1.0)\n\n")
    .replace("self._size = cfg.size", "self._size = cfg.size\n        self._scale = float(cfg.scale)")
)
# The config sets a key the class does not declare: `ding-env run` refuses it.
REFUSED_CONFIG = BROKEN_PACKAGE["config/walk_config.py"].replace("size=3)", "size=3, colour='red')")


def test_a_refused_config_reports_its_error_and_the_envs_still_get_the_class_defaults(tmp_path):
    files = {**BROKEN_PACKAGE, "walk_env.py": DECLARED_ENV, "config/walk_config.py": REFUSED_CONFIG}
    for name, text in files.items():
        (tmp_path / "walk_pkg" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "walk_pkg" / name).write_text(text)
    code, report = port_json("walk_pkg", "--out", "ported/walk_pkg", "--try", "--steps", "10", cwd=tmp_path)
    (env,) = report["trial"]["envs"]
    assert code == 1 and not env["run_accepts_config"]
    # Not "'EasyDict' object has no attribute 'scale'": the class's default fills it, as in ding-env run.
    assert env["base"] == {"steps": 10, "episodes": 2} and env["subprocess"] == env["base"]
    assert env["check"]["errors"] == []
    (failure,) = report["failures"]
    assert "ding-env run refuses its config" in failure and "unknown key 'colour'" in failure


# The env steps legacy gym's Acrobot, whose step uses np.float_, which numpy 2 removed.
LEGACY_GYM_ENV = BROKEN_PACKAGE["walk_env.py"].replace(
    "    def step(self, action):\n        self._t += 1\n",
    "    def step(self, action):\n        import gym\n\n        acrobot = gym.make('Acrobot-v1')\n"
    "        acrobot.reset(seed=0)\n        acrobot.step(0)\n        self._t += 1\n",
)


def test_a_numpy_2_removal_in_a_library_is_named_with_the_librarys_line_and_a_fix(tmp_path):
    """numpy 2 words it '`np.float_` was removed': no fix was given, and only the port's line was named."""
    files = {**BROKEN_PACKAGE, "walk_env.py": LEGACY_GYM_ENV.replace("np.float64", "np.float32")}
    for name, text in files.items():
        (tmp_path / "walk_pkg" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "walk_pkg" / name).write_text(text)
    code, report = port_json("walk_pkg", "--out", "ported/walk_pkg", "--try", "--steps", "4", cwd=tmp_path)
    base = report["trial"]["envs"][0]["base"]
    assert code == 1 and "`np.float_` was removed" in base["error"]
    assert base["where"].startswith("walk_env.py:") and base["raised_in"].startswith("gym/envs/classic_control/")
    assert base["fix"].startswith("numpy 2 removed np.float_") and "Gymnasium" in base["fix"]
    text = (tmp_path / "ported" / "walk_pkg" / "PORTING.md").read_text()
    assert f"(at `{base['where']}`, raised in `{base['raised_in']}`)" in text
    assert "`ding-env check --di-engine`: 1 error," in text or "`ding-env check --di-engine`: 0 errors" in text


def test_a_missing_module_the_config_names_elsewhere_says_where_the_port_should_be(tmp_path):
    config = BROKEN_PACKAGE["config/walk_config.py"].replace("'walk_pkg.walk_env'", "'dizoo.walking.envs.walk_env'")
    files = {**BROKEN_PACKAGE, "walk_env.py": BROKEN_PACKAGE["walk_env.py"].replace("np.float64", "np.float32")}
    for name, text in {**files, "config/walk_config.py": config}.items():
        (tmp_path / "walk_pkg" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "walk_pkg" / name).write_text(text)
    code, report = port_json("walk_pkg", "--out", "ported/walk_pkg", "--try", "--steps", "4", cwd=tmp_path)
    (env,) = report["trial"]["envs"]
    assert code == 1, report
    failures = " ".join(report["failures"])
    assert "expect the module at dizoo/walking/envs/walk_env" in failures and "pip install" not in failures


def test_a_package_without_a_config_says_which_section_ding_env_run_accepted(tmp_path):
    files = {name: text for name, text in BROKEN_PACKAGE.items() if not name.startswith("config/")}
    files["walk_env.py"] = DECLARED_ENV
    for name, text in files.items():
        (tmp_path / "walk_pkg" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "walk_pkg" / name).write_text(text)
    _, report = port_json("walk_pkg", "--out", "ported/walk_pkg", "--try", "--steps", "4", cwd=tmp_path)
    (env,) = report["trial"]["envs"]
    assert env["config"] is None and env["run_accepts_config"]
    text = (tmp_path / "ported" / "walk_pkg" / "PORTING.md").read_text()
    assert "- DI-engine config: none found (tried with its default config)" in text
    assert "- `ding-env run` accepts an env section naming only the type (its default config)" in text
    assert "accepts the config" not in text  # there was none


def test_a_port_hiding_an_installed_package_of_its_name_says_so(tmp_path):
    # As a copy of DI-engine's dizoo/minigrid ported alone hides the minigrid package its env imports.
    (tmp_path / "msgspec").mkdir()
    (tmp_path / "msgspec" / "__init__.py").write_text("")
    (tmp_path / "msgspec" / "envs.py").write_text("import msgspec.json\n")
    _, report = port_json("msgspec", "--out", "ported/msgspec", "--try", "--steps", "4", cwd=tmp_path)
    failed = report["trial"]["imports"]["msgspec.envs"]
    assert "No module named 'msgspec.json'" in failed["error"]
    assert failed["fix"].startswith("msgspec.json belongs to the installed package msgspec, which the port's own")
    assert failed["fix"].endswith("inside its dizoo/ tree (dizoo/msgspec)") and "not installed" not in failed["fix"]


# The env keeps a Gymnasium env and takes its reset's (obs, info) tuple for the observation.
TUPLE_RESET_ENV = (
    BROKEN_PACKAGE["walk_env.py"]
    .replace("np.float64", "np.float32")
    .replace(
        "        self._t = 0\n        return np.zeros(self._size, np.float32)\n",
        "        self._t = 0\n        obs = gym.make('CartPole-v1').reset(seed=0)\n"
        "        return obs.astype(np.float32)[: self._size]\n",
    )
)


def test_a_reset_tuple_taken_for_the_observation_fails_with_the_fix(tmp_path):
    files = {**BROKEN_PACKAGE, "walk_env.py": TUPLE_RESET_ENV}
    for name, text in files.items():
        (tmp_path / "walk_pkg" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "walk_pkg" / name).write_text(text)
    _, report = port_json("walk_pkg", "--out", "ported/walk_pkg", "--try", "--steps", "4", cwd=tmp_path)
    base = report["trial"]["envs"][0]["base"]
    assert "'tuple' object has no attribute 'astype'" in base["error"]
    assert base["fix"].startswith("gym >= 0.26 and Gymnasium reset() returns (obs, info): unpack it")


def test_the_trial_leaves_out_di_engines_training_scripts_and_tests(tmp_path):
    package = tmp_path / "league"
    for name in ("__init__.py", "game_env.py", "league_demo_ppo_main.py", "test_game_env.py", "entry/run.py"):
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text("")
    (package / "config").mkdir()
    (package / "config" / "game_config.py").write_text("")
    modules, configs = module_names(tmp_path, package)
    assert list(modules) == ["league", "league.game_env"]  # not the training script (it imports tensorboardX, say)
    assert configs == [package / "config" / "game_config.py"]


def write_package(root, files: dict) -> None:
    for name, text in files.items():
        (root / "walk_pkg" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "walk_pkg" / name).write_text(text)


RUNNING_ENV = BROKEN_PACKAGE["walk_env.py"].replace("np.float64", "np.float32")
# As DI-engine's bipedalwalker_ppopg_config.py: a DI-engine import at the top, beyond the env layer.
PIPELINE_CONFIG = (
    "from easydict import EasyDict\nfrom ding.entry import serial_pipeline\n\n"
    + (BROKEN_PACKAGE["config/walk_config.py"])
)


def test_a_config_that_fails_to_load_is_a_failure_naming_its_line_and_the_fix(tmp_path):
    """It was skipped: the report said "DI-engine config: none found" and "nothing failed" (exit 0)."""
    write_package(tmp_path, {**BROKEN_PACKAGE, "walk_env.py": DECLARED_ENV, "config/walk_config.py": PIPELINE_CONFIG})
    (tmp_path / "walk_pkg" / "config" / "__init__.py").write_text("")  # no config: not a failure
    code, report = port_json("walk_pkg", "--out", "ported/walk_pkg", "--try", "--steps", "4", cwd=tmp_path)
    assert code == 1
    (unloaded,) = report["trial"]["unloaded_configs"]
    assert unloaded["config"] == "config/walk_config.py" and unloaded["where"] == "config/walk_config.py:2"
    assert unloaded["error"] == "ModuleNotFoundError: No module named 'ding'"
    assert unloaded["fix"].startswith("ding.entry (imported at walk_config.py:2) is DI-engine beyond its env layer")
    assert 'under `if __name__ == "__main__":`' in unloaded["fix"] and "keep DI-engine installed" in unloaded["fix"]
    (failure,) = report["failures"]
    assert failure.startswith("config config/walk_config.py: ding-env run cannot load it: ModuleNotFoundError")
    assert failure.endswith("(at config/walk_config.py:2)")
    text = (tmp_path / "ported" / "walk_pkg" / "PORTING.md").read_text()
    assert "- config `config/walk_config.py` FAILED to load, so `ding-env run` refuses it:" in text
    assert "| result | FAILED: 1 failure |" in text and "1 config file did not load" in text


def test_ding_env_run_gives_the_same_fix_for_a_config_importing_di_engine_beyond_its_env_layer(tmp_path):
    (tmp_path / "walk_config.py").write_text(PIPELINE_CONFIG)
    done = ding_env_cli(["run", "walk_config.py", "--steps", "2"], cwd=tmp_path)
    said = " ".join(done.stderr.decode().split())
    assert done.returncode == 2 and "failed to load: ModuleNotFoundError: No module named 'ding'" in said
    assert "ding.entry (imported at walk_config.py:2) is DI-engine beyond its env layer" in said
    assert 'under `if __name__ == "__main__":`' in said and "ding-env port FOLDER" not in said


# Two configs of one type: the first builds an env whose size the space does not hold, the second runs.
SECOND_CONFIG = BROKEN_PACKAGE["config/walk_config.py"].replace("size=3)", "size=4)")


def test_every_config_of_a_type_is_tried_and_counted(tmp_path):
    """Only the first config of a type was tried: its failure hid that the others run."""
    env = RUNNING_ENV.replace("return np.zeros(self._size, np.float32)", "return np.zeros(3, np.float32)")
    files = {name: text for name, text in BROKEN_PACKAGE.items() if name != "config/walk_config.py"}
    files.update({"config/walk_a_config.py": BROKEN_PACKAGE["config/walk_config.py"], "walk_env.py": env})
    write_package(tmp_path, {**files, "config/walk_b_config.py": SECOND_CONFIG})
    code, report = port_json("walk_pkg", "--out", "ported/walk_pkg", "--try", "--steps", "4", cwd=tmp_path)
    first, second = report["trial"]["envs"]
    assert (first["config"], second["config"]) == ("config/walk_a_config.py", "config/walk_b_config.py")
    assert first["base"] == {"steps": 4, "episodes": 0} and first["check"]["errors"] == []
    assert "reset obs must have shape (4,)" in second["base"]["error"] and second["check"]["errors"]
    assert code == 1 and all("with config/walk_b_config.py" in failure for failure in report["failures"])
    text = (tmp_path / "ported" / "walk_pkg" / "PORTING.md").read_text()
    assert "| tried (--try) | 1 env type registered; 2 configs tried; 1 of them ran in both managers" in text
    assert "2 DI-engine configs, each tried; 1 ran in both managers." in text


def ding_env_cli(args: list[str], cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "ding_env", *args], cwd=cwd, env=env, capture_output=True, timeout=300)


# The reward space is a Dict, which the managers refuse at launch: the declaring line (47) is the one to change.
DICT_REWARD_ENV = RUNNING_ENV.replace(
    "        return gym.spaces.Box(0.0, 1.0, (1,), np.float32)\n",
    "        return gym.spaces.Dict({'goal': gym.spaces.Box(0.0, 1.0, (1,), np.float32)})\n",
)


def test_a_refused_reward_space_names_its_declaring_line(tmp_path):
    """The managers' words ("reward_space is Dict(...)") were not matched: no line, no fix was given."""
    write_package(tmp_path, {**BROKEN_PACKAGE, "walk_env.py": DICT_REWARD_ENV})
    code, report = port_json("walk_pkg", "--out", "ported/walk_pkg", "--try", "--steps", "4", cwd=tmp_path)
    base = report["trial"]["envs"][0]["base"]
    assert code == 1 and "reward_space is Dict(" in base["error"]
    assert base["where"] == "walk_env.py:43"  # the reward_space property's return, not the observation's (35)
    assert base["fix"].startswith("the managers cannot hold the reward space the env declares at walk_env.py:43")


# As DI-engine's classic-control envs: enable_save_replay wraps RecordVideo around an env made with no render mode.
RECORDING_ENV = RUNNING_ENV.replace(
    "    def step(self, action):\n",
    "    def enable_save_replay(self, replay_path):\n"
    "        self._env = gym.wrappers.RecordVideo(gym.make('CartPole-v1'), video_folder=replay_path)\n"
    "        self._env.reset(seed=0)\n\n"
    "    def step(self, action):\n",
)
REPLAY_CONFIG = BROKEN_PACKAGE["config/walk_config.py"].replace("size=3)", "size=3, replay_path='walk_videos')")


def test_a_config_asking_for_replays_is_tried_recording_as_ding_env_run_records(tmp_path):
    """--try left env.replay_path out and said the config runs; ding-env run records and failed."""
    write_package(tmp_path, {**BROKEN_PACKAGE, "walk_env.py": RECORDING_ENV, "config/walk_config.py": REPLAY_CONFIG})
    code, report = port_json("walk_pkg", "--out", "ported/walk_pkg", "--try", "--steps", "4", cwd=tmp_path)
    (env,) = report["trial"]["envs"]
    assert env["base"] == {"steps": 4, "episodes": 0}  # the collector's envs record nothing
    replay = env["replay"]
    assert code == 1 and replay["replay_path"] == "walk_videos" and "Render mode is None" in replay["error"]
    assert replay["where"] == "walk_env.py:21" and "render_mode='rgb_array'" in replay["fix"]
    assert "--set env.replay_path=none" in replay["fix"]
    assert not (tmp_path / "walk_videos").exists() and not (tmp_path / "ported" / "walk_videos").exists()
    text = (tmp_path / "ported" / "walk_pkg" / "PORTING.md").read_text()
    assert (
        "- `ding-env run` records evaluator replays to `walk_videos` (the config's env.replay_path): recording" in text
    )

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ding_env.checker.target import resolve_target
from ding_env.cli import main
from tests.checker import broken_envs as gallery

REPO = Path(__file__).resolve().parents[2]


def test_clean_target_exits_zero(capsys):
    assert main(["check", "card_game"]) == 0
    out = capsys.readouterr()
    assert "passed: 12 checks, 0 errors" in out.out and out.err == ""  # no progress redraws off a terminal


@pytest.mark.parametrize(("env_type", "env_id"), [("cartpole", "CartPole-v1"), ("pendulum", "Pendulum-v1")])
def test_a_registered_type_that_fixes_its_gymnasium_id_needs_no_config(capsys, env_type, env_id):
    assert main(["check", env_type, "--episodes", "1", "--max-steps", "50"]) == 0
    out = capsys.readouterr().out
    assert f"('{env_id}')" in out and "0 errors" in out


def test_a_type_registered_by_the_configs_import_names_is_a_target(tmp_path):
    (tmp_path / "my_envs.py").write_text(
        "from ding_env import ENV_REGISTRY\nfrom tests.envs import CountingEnv\n\n"
        "ENV_REGISTRY.register('my_type', CountingEnv)\n"
    )
    (tmp_path / "my_config.py").write_text("config = dict(env=dict(type='my_type', import_names=['my_envs']))\n")
    result = check_command("my_type", "--config", "my_config.py", "--episodes", "1", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "tests.envs:CountingEnv" in result.stdout and "0 errors" in result.stdout


COLLECTOR_CFG_ENV = """
import copy

from tests.checker.broken_envs import GoodEnv


class NeedsCollectorCfgEnv(GoodEnv):
    # Reads is_train, which only its create_collector_env_cfg sets, as DI-engine's Atari-style envs do.
    def __init__(self, cfg=None):
        super().__init__(cfg)
        self.is_train = self._cfg.is_train

    @staticmethod
    def create_collector_env_cfg(cfg):
        count = cfg.pop("collector_env_num")
        cfg = copy.deepcopy(cfg)
        cfg.is_train = True
        return [cfg for _ in range(count)]

    @staticmethod
    def create_evaluator_env_cfg(cfg):
        count = cfg.pop("evaluator_env_num")
        cfg = copy.deepcopy(cfg)
        cfg.is_train = False
        return [cfg for _ in range(count)]


class NoConfigsEnv(NeedsCollectorCfgEnv):
    @staticmethod
    def create_collector_env_cfg(cfg):
        return []
"""


@pytest.mark.parametrize("form", ["config file", "class with --config", "class with --di-engine and no config"])
def test_check_builds_a_config_files_env_as_run_does_through_its_create_collector_env_cfg(tmp_path, form):
    # The env section reached the env as it is: 'EasyDict' object has no attribute 'is_train'.
    (tmp_path / "collector_cfg_env.py").write_text(COLLECTOR_CFG_ENV)
    (tmp_path / "cfg.py").write_text(
        "from ding_env import ENV_REGISTRY\nfrom collector_cfg_env import NeedsCollectorCfgEnv\n\n"
        "ENV_REGISTRY.register('needs_collector_cfg', NeedsCollectorCfgEnv, force_overwrite=True)\n"
        "config = dict(env=dict(type='needs_collector_cfg', max_episode_steps=20))\n"
    )
    if form == "config file":
        args = ("cfg.py",)
    elif form == "class with --config":
        (tmp_path / "section.py").write_text("config = dict(env=dict(max_episode_steps=20))\n")
        args = ("collector_cfg_env:NeedsCollectorCfgEnv", "--config", "section.py")
    else:
        args = ("collector_cfg_env:NeedsCollectorCfgEnv",)
    result = check_command(*args, "--di-engine", "--episodes", "1", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "passed: 12 checks, 0 errors" in result.stdout


def test_serve_builds_evaluator_envs_through_the_evaluator_config_when_asked(tmp_path, monkeypatch):
    # Every served env got the collector's config (is_train=True), the evaluator's server too.
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "collector_cfg_env.py").write_text(COLLECTOR_CFG_ENV)
    (tmp_path / "section.py").write_text("config = dict(env=dict(max_episode_steps=20))\n")
    (tmp_path / "cartpole_section.py").write_text("config = dict(env=dict(type='cartpole'))\n")
    target, section = "collector_cfg_env:NeedsCollectorCfgEnv", str(tmp_path / "section.py")
    for role, is_train in (("collector", True), ("evaluator", False)):
        env_cls, cfg = resolve_target(target, section, batch_envs=True, role=role)
        assert env_cls(cfg).is_train is is_train
        # DingEnvWrapper's training or evaluation preprocessing: is_train left out means training.
        _, cfg = resolve_target(str(tmp_path / "cartpole_section.py"), batch_envs=True, role=role)
        assert cfg.get("is_train", True) is is_train


def test_a_create_collector_env_cfg_returning_no_config_is_named_as_such(tmp_path):
    (tmp_path / "collector_cfg_env.py").write_text(COLLECTOR_CFG_ENV)
    (tmp_path / "section.py").write_text("config = dict(env=dict(max_episode_steps=20))\n")
    result = check_command("collector_cfg_env:NoConfigsEnv", "--config", "section.py", cwd=tmp_path)
    assert result.returncode == 2
    assert "NoConfigsEnv.create_collector_env_cfg(env section) returned [], expected a list of one env config" in (
        result.stderr
    )


def test_broken_target_exits_one_with_fix_hints(capsys):
    assert main(["check", "tests.checker.broken_envs:Float64ObsEnv"]) == 1
    out = capsys.readouterr().out
    assert "[FAIL] check_reset_obs" in out and "fix:" in out


def test_a_step_returning_a_plain_tuple_is_one_finding_pointing_at_the_envs_step():
    result = check_command("tests.checker.broken_envs:PlainTupleStepEnv", "--episodes", "1")
    assert result.returncode == 1
    step_line = (
        next(
            number
            for number, line in enumerate((REPO / "tests/checker/broken_envs.py").read_text().splitlines(), 1)
            if line.startswith("class PlainTupleStepEnv")
        )
        + 1
    )
    assert result.stdout.count("error:") == 1 and "AttributeError" not in result.stdout
    assert result.stdout.endswith("FAILED: 12 checks, 1 error, 0 warnings\n")  # not "1 errors"
    assert "PlainTupleStepEnv.step() returned a tuple of 4 items, not a BaseEnvTimestep" in result.stdout
    assert f"tests/checker/broken_envs.py:{step_line}" in result.stdout


def test_json_output(capsys):
    assert main(["check", "configs/card_game.py", "--json", "--episodes", "1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["passed"] is True and "check_subprocess" in data["checks"]


def test_unimportable_target_is_a_usage_error(capsys):
    assert main(["check", "no.such.module:Env"]) == 2
    err = capsys.readouterr().err
    assert "cannot import module 'no.such.module'" in err and "Traceback" not in err
    assert main(["check", "not_registered"]) == 2
    assert "did you mean" not in capsys.readouterr().err
    assert main(["check", "cartpol"]) == 2  # as ding-env run says it
    assert "cannot resolve 'cartpol' (did you mean 'cartpole'?)" in capsys.readouterr().err
    assert main(["check", "json:dumps"]) == 2
    assert "not a BaseEnv subclass" in capsys.readouterr().err
    assert main(["check", "dizoo.classic_control.cartpole.envs:CartPoleBatchEnv"]) == 2
    assert "not a BaseEnv subclass: a batch env, which ding_env.checker.check_batch_env" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("gym:NoSuchEnv-v0", "gym:NoSuchEnv-v0: Gymnasium has no such env id (Environment `NoSuchEnv` doesn't exist"),
        ("gym:CartPole-v9", "gym:CartPole-v9: Gymnasium has no such env id (Environment version `v9`"),
        ("gym:", "gym:ENV_ID needs an env id after the colon"),
    ],
)
def test_a_gym_id_no_registry_has_is_a_usage_error(capsys, target, message):
    assert main(["check", target]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("command", ["check", "serve"])
def test_a_config_that_the_target_would_override_is_a_usage_error(tmp_path, monkeypatch, capsys, command):
    # Both ran the target's env and dropped the config's Pendulum without a word.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pd.py").write_text("config = dict(env=dict(env_id='Pendulum-v1'))\n")
    assert main([command, "gym:CartPole-v1", "--config", "pd.py"]) == 2
    assert "its env section has env_id 'Pendulum-v1', but TARGET is gym:CartPole-v1" in capsys.readouterr().err
    assert main([command, str(REPO / "configs" / "cartpole.py"), "--config", "pd.py"]) == 2
    assert "is a config file and --config pd.py another: give one of them" in capsys.readouterr().err


def check_command(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ding_env", "check", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_di_engine_mode_turns_di_engines_tolerated_forms_into_warnings():
    target = "tests.checker.broken_envs:DIEngineStyleEnv"
    strict = check_command(target, "--episodes", "1")
    assert strict.returncode == 1
    assert "requires a cfg and none was given" in strict.stdout and "--di-engine" in strict.stdout
    assert strict.stdout.count("error:") == 1  # one finding, not one per check
    result = check_command(target, "--di-engine", "--episodes", "2", "--json")
    assert result.returncode == 0, result.stdout
    report = json.loads(result.stdout)
    warnings = {finding["check"]: finding["message"] for finding in report["findings"]}
    assert report["passed"] and all(finding["severity"] == "warning" for finding in report["findings"])
    assert "spaces are None before the first reset()" in warnings["check_spaces"]
    assert "check_random_action" not in warnings  # a (1,) array for Discrete is DI-engine's form and ours
    assert "info['truncated'] (bool) is missing" in warnings["check_step_output"]


def test_a_strict_error_that_di_engine_mode_accepts_says_so_in_its_fix():
    # The fix named only the strict form: a DI-engine env's author learnt of --di-engine from the docs alone.
    from ding_env.checker import check_env

    report = check_env(gallery.DIEngineStyleEnv, {"max_episode_steps": 30}, episodes=2, subprocess=False)
    pointed = {finding.check for finding in report.errors if "--di-engine" in finding.hint}
    assert pointed == {"check_spaces", "check_step_output", "check_time_limit"}, [f.message for f in report.errors]
    assert all("accept it: --di-engine" in finding.hint for finding in report.errors if finding.check in pointed)


def test_a_config_for_a_class_target_is_held_to_the_keys_the_class_declares(tmp_path, monkeypatch, capsys):
    # A misspelt key, or the section of another env, passed: the env ran with its defaults.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "typo.py").write_text("config = dict(env=dict(max_episode_step=5))\n")
    (tmp_path / "other.py").write_text("config = dict(env=dict(env_id='Acrobot-v1'))\n")
    target = "tests.checker.broken_envs:GoodEnv"
    assert main(["check", target, "--config", "typo.py", "--episodes", "1"]) == 2
    err = capsys.readouterr().err
    assert (
        "unknown key 'max_episode_step' in --config typo.py env section (for tests.checker.broken_envs.GoodEnv)" in err
    )
    assert "(did you mean 'max_episode_steps'?)" in err
    # The class's own config is where to declare a key it reads: the hint named DingEnvWrapper's keys.
    assert "declare it there with its default" in err and "make_kwargs" not in err
    assert main(["check", target, "--config", "other.py", "--episodes", "1"]) == 2
    assert "unknown key 'env_id'" in capsys.readouterr().err
    (tmp_path / "good.py").write_text("config = dict(env=dict(max_episode_steps=5))\n")
    assert main(["check", target, "--config", "good.py", "--episodes", "1"]) == 0


def test_a_key_read_by_init_but_not_declared_says_how_to_give_it(tmp_path):
    target = "tests.checker.broken_envs:ReadsUndeclaredKeyEnv"
    result = check_command(target, "--di-engine")
    assert result.returncode == 1 and "'max_step'" in result.stdout and "--config FILE" in result.stdout
    (tmp_path / "cfg.py").write_text("config = dict(env=dict(max_step=10))\n")
    assert check_command(target, "--di-engine", "--config", str(tmp_path / "cfg.py"), "--episodes", "1").returncode == 0


def test_a_problem_on_every_step_is_one_finding_with_its_count_and_first_step():
    report = json.loads(check_command("tests.checker.broken_envs:Float64ObsEnv", "--json").stdout)
    step_findings = [f for f in report["findings"] if f["check"] == "check_step_output"]
    assert len(step_findings) == 1
    assert step_findings[0]["count"] > 10 and step_findings[0]["first_step"] == 1
    assert "(step" not in step_findings[0]["message"]


def test_checks_that_would_only_repeat_a_failure_are_skipped():
    result = check_command("tests.checker.broken_envs:SharedBufferEnv", "--episodes", "1")
    assert "[FAIL] check_obs_memory" in result.stdout
    assert "[skip] check_static_seed (not run: check_obs_memory failed" in result.stdout
    assert "static seed" not in result.stdout.split("[skip] check_static_seed")[0].split("check_obs_memory")[-1]


def test_gym_ids_and_ding_env_wrapper_configs_are_targets(tmp_path):
    assert check_command("gym:CartPole-v1", "--episodes", "1").returncode == 0
    (tmp_path / "wrapper_cfg.py").write_text("config = dict(env=dict(env_id='CartPole-v1'))\n")
    result = check_command(str(tmp_path / "wrapper_cfg.py"), "--episodes", "1")
    assert result.returncode == 0 and "DingEnvWrapper('CartPole-v1')" in result.stdout
    result = check_command("ding_env:DingEnvWrapper", "--config", str(tmp_path / "wrapper_cfg.py"), "--episodes", "1")
    assert result.returncode == 0, result.stdout


def test_a_config_whose_type_the_target_would_ignore_is_refused_naming_both(capsys, monkeypatch):
    """The wrapper class with a config of the 'cartpole' type checked no env id, and failed its construct check."""
    monkeypatch.chdir(REPO)
    assert main(["check", "ding_env:DingEnvWrapper", "--config", "configs/cartpole.py"]) == 2
    err = capsys.readouterr().err
    assert "names type 'cartpole', but TARGET 'ding_env:DingEnvWrapper' is another class" in err
    assert "ding-env check configs/cartpole.py" in err
    assert main(["check", "cartpole", "--config", "configs/cartpole.py", "--episodes", "1"]) == 0


@pytest.mark.parametrize(
    ("config", "key"),
    [
        ("env=dict(type='card_game', max_episode_step=9)", "max_episode_step"),  # a class that declares its keys
        ("env=dict(type='card_game', manager=dict(auto_rest=False))", "auto_rest"),
        ("seeed=1, env=dict(type='card_game')", "seeed"),
        ("env=dict(env_id='CartPole-v1', max_episode_step=9)", "max_episode_step"),  # no type: DingEnvWrapper's keys
    ],
)
def test_serve_refuses_a_config_key_that_run_refuses_with_runs_error(tmp_path, monkeypatch, capsys, config, key):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cfg.py").write_text(f"config = dict({config})\n")
    assert main(["run", "cfg.py"]) == 2
    refused = capsys.readouterr().err.removeprefix("ding-env run: ")
    assert f"unknown key {key!r}" in refused
    assert main(["serve", "cfg.py", "--envs", "1"]) == 2  # refused before any socket is bound
    assert capsys.readouterr().err == f"ding-env serve: {refused}"
    assert ("(max_episode_steps too) go in make_kwargs" in refused) == ("env_id=" in config)


def test_run_and_check_read_a_section_with_an_env_id_and_no_type_alike(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cfg.py").write_text(
        "config = dict(env=dict(env_id='CartPole-v1', collector_env_num=2, evaluator_env_num=1, "
        "n_evaluator_episode=1))\n"
    )
    assert main(["run", "cfg.py", "--steps", "10"]) == 0  # refused before: "env config has no 'type'"
    assert "collect steps        10\n" in capsys.readouterr().out
    assert main(["check", "cfg.py", "--episodes", "1"]) == 0
    (tmp_path / "none.py").write_text("config = dict(env=dict(collector_env_num=2))\n")
    assert main(["run", "none.py"]) == 2
    error = capsys.readouterr().err
    assert "env config has no 'type'; set env.type to a registered env type" in error
    assert "or env.env_id to a Gymnasium id" in error


def test_check_runs_a_config_file_once(tmp_path, monkeypatch):
    # A config file is Python: executing it twice repeats whatever it does (here, one line per run).
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cfg.py").write_text(
        "with open('runs.txt', 'a') as runs:\n    runs.write('run\\n')\nconfig = dict(env=dict(type='card_game'))\n"
    )
    assert main(["check", "cfg.py", "--episodes", "1"]) == 0
    assert (tmp_path / "runs.txt").read_text() == "run\n"


@pytest.mark.parametrize(
    ("config", "key"),
    [
        ("env=dict(type='card_game', max_episode_step=9)", "max_episode_step"),  # a class that declares its keys
        ("env=dict(type='card_game', manager=dict(auto_rest=False))", "auto_rest"),
        ("seeed=1, env=dict(type='card_game')", "seeed"),
    ],
)
@pytest.mark.parametrize("as_config_option", [False, True])
def test_check_refuses_a_config_key_that_run_refuses_with_runs_error(
    tmp_path, monkeypatch, capsys, config, key, as_config_option
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cfg.py").write_text(f"config = dict({config})\n")
    assert main(["run", "cfg.py"]) == 2
    refused = capsys.readouterr().err.removeprefix("ding-env run: ")
    assert f"unknown key {key!r}" in refused
    target = ["card_game", "--config", "cfg.py"] if as_config_option else ["cfg.py"]
    assert main(["check", *target, "--episodes", "1"]) == 2
    assert capsys.readouterr().err == f"ding-env check: {refused}"


@pytest.mark.parametrize(
    ("flag", "value", "bound"), [("--episodes", "0", 1), ("--max-steps", "-1", 1), ("--seed", "-1", 0)]
)
def test_check_names_the_count_flag_it_refuses(capsys, flag, value, bound):
    assert main(["check", "cartpole", flag, value]) == 2
    assert capsys.readouterr().err == f"ding-env check: {flag} must be >= {bound}, got {value}\n"


def test_check_refuses_a_misspelt_key_in_the_config_of_a_gym_target(tmp_path, capsys):
    # The section configures DingEnvWrapper('CartPole-v1'): its keys are DingEnvWrapper's, as ding-env run reads them.
    (tmp_path / "cfg.py").write_text("config = dict(env=dict(max_episode_step=9))\n")
    assert main(["check", "gym:CartPole-v1", "--config", str(tmp_path / "cfg.py"), "--episodes", "1"]) == 2
    error = capsys.readouterr().err
    assert "unknown key 'max_episode_step'" in error and "DingEnvWrapper of env_id 'CartPole-v1'" in error
    (tmp_path / "ok.py").write_text("config = dict(env=dict(make_kwargs=dict(max_episode_steps=9)))\n")
    assert main(["check", "gym:CartPole-v1", "--config", str(tmp_path / "ok.py"), "--episodes", "1"]) == 0


def test_check_and_serve_read_a_remote_manager_section_whose_servers_come_at_run_time(tmp_path, capsys):
    # docs/remote.md: the servers are given when the run starts (--set env.manager.servers=[...]).
    (tmp_path / "cfg.py").write_text("config = dict(env=dict(type='cartpole', manager=dict(type='remote')))\n")
    assert main(["check", str(tmp_path / "cfg.py"), "--episodes", "1"]) == 0
    env_cls, cfg = resolve_target(str(tmp_path / "cfg.py"), batch_envs=True)  # what ding-env serve builds from
    assert cfg.manager.type == "remote"
    assert main(["run", str(tmp_path / "cfg.py")]) == 2  # the run itself needs them
    assert "'servers': expected a list of endpoints for type 'remote'" in capsys.readouterr().err


def test_check_refuses_a_misspelt_key_in_the_config_of_a_registered_type(tmp_path, capsys):
    (tmp_path / "cfg.py").write_text("config = dict(env=dict(max_episode_step=9))\n")
    assert main(["check", "cartpole", "--config", str(tmp_path / "cfg.py"), "--episodes", "1"]) == 2
    assert "unknown key 'max_episode_step'" in capsys.readouterr().err  # exit 1, a failed construct check, before
    (tmp_path / "ok.py").write_text("config = dict(env=dict(stop_value=195))\n")
    assert main(["check", "cartpole", "--config", str(tmp_path / "ok.py"), "--episodes", "1"]) == 0

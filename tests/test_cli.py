import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from ding_env.cli import main
from tests.support import run_without_modules


def test_list_shows_types_and_modules(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "cartpole" in out and "dizoo.card_game.envs.card_game_env:CardGameEnv" in out


def test_no_command_is_a_usage_error(capsys):
    assert main([]) == 2


@pytest.mark.parametrize("manager", ["base", "subprocess"])
def test_demo_runs_every_env_type(manager, capsys):
    assert main(["demo", "--episodes", "1", "--envs", "2", "--manager", manager]) == 0
    out = capsys.readouterr().out
    for name in ("cartpole", "pendulum", "mountain_car", "acrobot", "card_game"):
        assert name in out
    assert "steps/s" in out


def test_python_dash_m_entry_point():
    result = subprocess.run([sys.executable, "-m", "ding_env", "list"], capture_output=True, text=True, check=True)
    assert "card_game" in result.stdout


def test_ctrl_c_ends_a_run_cleanly_with_exit_code_130():
    import os
    import signal
    import uuid

    marker = f"sigint_{uuid.uuid4().hex[:8]}"  # in the command line of the run and of its forked workers
    segments = set(os.listdir("/dev/shm"))
    command = [sys.executable, "-m", "ding_env", "run", "configs/cartpole.py", "--steps", "100000000"]
    # SIGINT as a terminal delivers it: a test run started in the background inherits SIGINT ignored.
    run = subprocess.Popen(
        command + ["--set", f"exp_name={marker}"],
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        for line in run.stderr:  # wait until the collection is under way
            if line.startswith("collecting "):
                break
        run.send_signal(signal.SIGINT)
        err = run.stderr.read()
        assert run.wait(timeout=30) == 130
    finally:
        run.kill()
    assert "ding-env run: interrupted" in err and "Traceback" not in err
    leftovers = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
    assert leftovers == [] and set(os.listdir("/dev/shm")) <= segments


@pytest.mark.parametrize("signame", ["SIGHUP", "SIGTERM"])
def test_a_hangup_or_a_kill_of_the_whole_group_ends_a_run_closing_everything(signame):
    # A closed terminal or SSH session sends SIGHUP to every process of the group, the resource tracker's too: the
    # run died at once and its shared memory stayed in /dev/shm.
    import os
    import signal
    import uuid

    marker = f"hangup_{uuid.uuid4().hex[:8]}"
    segments = set(os.listdir("/dev/shm"))
    command = [sys.executable, "-m", "ding_env", "run", "configs/cartpole.py", "--steps", "100000000"]
    run = subprocess.Popen(
        command + ["--set", f"exp_name={marker}"], stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        for line in run.stderr:  # wait until the collection is under way
            if line.startswith("collecting "):
                break
        os.killpg(run.pid, getattr(signal, signame))
        err = run.stderr.read()
        assert run.wait(timeout=30) == 128 + getattr(signal, signame)
    finally:
        run.kill()
    assert f"ding-env run: stopped by {signame}; every env closed" in err and "Traceback" not in err
    time.sleep(0.5)  # the resource tracker's own end
    leftovers = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
    assert leftovers == [] and set(os.listdir("/dev/shm")) <= segments


REPO = Path(__file__).resolve().parents[1]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def ding_env_command(*args: str, cwd: Path, **kwargs) -> subprocess.CompletedProcess:
    """The `ding-env` console script as a user runs it (its sys.path starts at the script's folder)."""
    script = "import sys; from ding_env.cli import main; sys.exit(main())"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(REPO)!r}); {script}", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        **kwargs,
    )


COIN = """
import gymnasium as gym, numpy as np
from ding_env import BaseEnv
from ding_env.env.timestep import termination


class Coin(BaseEnv):
    def reset(self):
        self._next_episode_seed()
        return np.zeros(1, np.float32)

    def step(self, action):
        return termination(np.zeros(1, np.float32), 1.0, episode_return=1.0)

    def close(self):
        pass

    def __repr__(self):
        return "Coin()"

    observation_space = property(lambda self: gym.spaces.Box(0, 1, (1,), np.float32))
    action_space = property(lambda self: gym.spaces.Discrete(2))
    reward_space = property(lambda self: gym.spaces.Box(0, 1, (1,), np.float32))
"""


def test_the_current_directory_is_on_sys_path_for_check(tmp_path):
    (tmp_path / "coin.py").write_text(COIN)
    result = ding_env_command("check", "coin:Coin", "--episodes", "1", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "passed" in result.stdout


def test_version():
    from ding_env import __version__

    result = ding_env_command("--version", cwd=REPO)
    assert result.returncode == 0 and result.stdout.strip() == f"ding-env {__version__}"


def test_help_has_examples_and_every_run_manager():
    result = ding_env_command("run", "--help", cwd=REPO)
    assert "examples:" in result.stdout and "ding-env run configs/cartpole.py" in result.stdout
    assert "async_subprocess:" in result.stdout and "subprocess_v2" in result.stdout and "repeat" in result.stdout
    check_help = ding_env_command("check", "--help", cwd=REPO).stdout
    assert "gym:CartPole-v1" in check_help and "--di-engine" in check_help


def test_a_failing_policy_names_the_users_file_and_line_and_verbose_shows_the_traceback(tmp_path):
    (tmp_path / "bad_policy.py").write_text("def act(obs):\n    raise ValueError('my policy bug')\n")
    args = ("run", str(REPO / "configs" / "cartpole.py"), "--steps", "100", "--policy", "bad_policy:act")
    result = ding_env_command(*args, "--manager", "base", cwd=tmp_path)
    assert result.returncode == 1
    assert f"ValueError: my policy bug (at {tmp_path / 'bad_policy.py'}:2)" in result.stderr
    assert "Traceback" not in result.stderr
    verbose = ding_env_command("--verbose", *args, cwd=tmp_path)
    assert verbose.returncode == 1 and "Traceback (most recent call last)" in verbose.stderr
    assert 'bad_policy.py", line 2, in act' in verbose.stderr


def test_an_env_failing_in_a_worker_names_the_envs_file_and_line(tmp_path):
    (tmp_path / "crashing.py").write_text(
        "from dizoo.classic_control.cartpole.envs import CartPoleEnv\n"
        "from ding_env import ENV_REGISTRY\n\n\n"
        "@ENV_REGISTRY.register('crashing_cartpole')\n"
        "class Crashing(CartPoleEnv):\n"
        "    def step(self, action):\n"
        "        raise RuntimeError('env bug')\n"
    )
    (tmp_path / "crash_config.py").write_text(
        "config = dict(seed=0, env=dict(type='crashing_cartpole', import_names=['crashing'], collector_env_num=2,"
        " evaluator_env_num=1, n_evaluator_episode=1, stop_value=1))\n"
    )
    args = ("run", "crash_config.py", "--steps", "50", "--manager", "subprocess")
    result = ding_env_command(*args, cwd=tmp_path)
    assert result.returncode == 1
    assert f"(at {tmp_path / 'crashing.py'}:8)" in result.stderr
    verbose = ding_env_command(*args, "--verbose", cwd=tmp_path)
    assert "traceback in the env's process" in verbose.stderr and "RuntimeError: env bug" in verbose.stderr


@pytest.mark.parametrize("asked_by", ["config", "--replay"])
def test_an_env_failing_to_record_replays_says_what_asked_for_them_and_how_to_run_without(tmp_path, asked_by):
    (tmp_path / "recording.py").write_text(
        "from dizoo.classic_control.cartpole.envs import CartPoleEnv\n"
        "from ding_env import ENV_REGISTRY\n\n\n"
        "@ENV_REGISTRY.register('recording_cartpole')\n"
        "class Recording(CartPoleEnv):\n"
        "    def enable_save_replay(self, replay_path):\n"
        "        self.recording = True\n\n"
        "    def reset(self):\n"
        "        if getattr(self, 'recording', False):\n"
        "            raise ImportError('MoviePy is not installed')\n"
        "        return super().reset()\n"
    )
    replay = ", replay_path='videos'" if asked_by == "config" else ""
    (tmp_path / "record_config.py").write_text(
        "config = dict(seed=0, env=dict(type='recording_cartpole', import_names=['recording'], collector_env_num=1,"
        f" evaluator_env_num=1, n_evaluator_episode=1, stop_value=1{replay}))\n"
    )
    args = ("run", "record_config.py", "--steps", "10", "--manager", "base")
    result = ding_env_command(*args, *(["--replay", "videos"] if asked_by == "--replay" else []), cwd=tmp_path)
    assert result.returncode == 1
    assert "ImportError: MoviePy is not installed" in result.stderr
    source, without = {
        "config": ("the config's env.replay_path", "with --set env.replay_path=none"),
        "--replay": ("--replay", "without --replay"),
    }[asked_by]
    assert f"the evaluator's envs record replays to 'videos', as {source} asks; {without} they do not" in result.stderr
    if asked_by == "config":
        assert ding_env_command(*args, "--set", "env.replay_path=none", cwd=tmp_path).returncode == 0


def test_set_parses_true_and_false_as_booleans():
    from ding_env.run_config import load_run_config

    cfg = load_run_config(
        REPO / "configs" / "cartpole.py", ["env.manager.shared_memory=false", "env.obs_plus_prev_action_reward=TRUE"]
    )
    assert cfg.env.manager.shared_memory is False and cfg.env.obs_plus_prev_action_reward is True


def test_list_shows_user_registered_types_and_extras_status(tmp_path):
    (tmp_path / "my_envs.py").write_text(
        "from ding_env import ENV_REGISTRY\nfrom tests.envs import CountingEnv\n\n"
        "ENV_REGISTRY.register('my_counting', CountingEnv)\n"
    )
    result = ding_env_command("list", "--import", "my_envs", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = {line.split()[0]: line for line in result.stdout.splitlines()[1:]}
    assert "tests.envs:CountingEnv" in lines["my_counting"]
    assert "atari: installed" in lines["atari"] and "mujoco: installed" in lines["mujoco"]
    assert "entry point of the installed package 'ding-env'" in lines["cartpole"]


def test_check_takes_a_type_a_module_registers_given_with_import(tmp_path):
    # `ding-env check` had no --import: a type your own module registers could not be resolved by its name.
    (tmp_path / "my_envs.py").write_text(
        "from ding_env import ENV_REGISTRY\nfrom tests.checker.broken_envs import GoodEnv\n\n"
        "ENV_REGISTRY.register('my_walk', GoodEnv)\n"
    )
    result = ding_env_command("check", "my_walk", "--import", "my_envs", "--episodes", "1", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    missing = ding_env_command("check", "my_walk", "--import", "no_such_module", cwd=tmp_path)
    assert missing.returncode == 2 and "cannot import 'no_such_module' given to --import" in missing.stderr


def test_list_names_the_pettingzoo_extra_when_pettingzoo_is_missing():
    result = run_without_modules(["pettingzoo"], "from ding_env.cli import main\nsys.exit(main(['list']))")
    assert result.returncode == 0, result.stderr
    lines = {line.split()[0]: line for line in result.stdout.splitlines()[1:]}
    assert "pettingzoo: missing pettingzoo" in lines["petting_zoo"]


def test_demo_skips_types_without_their_extra_naming_the_extra_to_install():
    types = ["lunarlander", "minigrid", "cartpole"]
    code = f"from ding_env.demo import run_demo\nrun_demo({types!r}, 1, 1, 'base', 0, print)"
    result = run_without_modules(["Box2D", "minigrid"], code)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == (
        "lunarlander: skipped (env type 'lunarlander' needs the box2d extra (no module Box2D); "
        "install it with: pip install 'ding-env[box2d]')"
    )
    assert lines[1] == (
        "minigrid: skipped (env type 'minigrid' needs the minigrid extra (no module minigrid); "
        "install it with: pip install 'ding-env[minigrid]')"
    )
    assert lines[2].startswith("cartpole: 1 episodes")


def test_a_run_that_records_replays_says_where(tmp_path, capsys):
    # The videos were written with no word of it.
    args = ["run", "configs/cartpole.py", "--steps", "50", "--eval-episodes", "1", "--manager", "base"]
    assert main([*args, "--replay", str(tmp_path)]) == 0
    said = f"the evaluator records its episodes as videos in {str(tmp_path)!r} (--replay)"
    assert said in capsys.readouterr().err and list(tmp_path.glob("*.mp4"))


def test_run_replay_without_imageio_names_the_replay_extra(tmp_path):
    args = ["run", "configs/cartpole.py", "--steps", "50", "--eval-episodes", "1", "--manager", "base"]
    code = f"from ding_env.cli import main\nsys.exit(main({[*args, '--replay', str(tmp_path)]!r}))"
    result = run_without_modules(["imageio", "imageio_ffmpeg"], code)
    assert result.returncode == 1
    needs = "saving replays needs the replay extra (no module imageio, imageio_ffmpeg); install it with: "
    assert needs + "pip install 'ding-env[replay]'" in result.stderr


def test_progress_bars_fit_80_columns_show_eta_and_cover_evaluation():
    """The run's stderr is an 80-column terminal; stdout (a pipe) gets the summary only."""
    main_fd, child_fd = pty.openpty()
    fcntl.ioctl(child_fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "80"}
    args = ["run", "configs/cartpole.py", "--steps", "3000", "--manager", "base"]
    run = subprocess.Popen(
        [sys.executable, "-m", "ding_env", *args], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=child_fd
    )
    os.close(child_fd)
    chunks = []
    while True:
        try:
            chunk = os.read(main_fd, 4096)
        except OSError:  # the terminal closes when the run ends
            break
        if not chunk:
            break
        chunks.append(chunk)
    stdout = run.stdout.read().decode()
    assert run.wait(timeout=60) == 0
    os.close(main_fd)
    terminal = ANSI.sub("", b"".join(chunks).decode())
    redraws = [part for part in re.split(r"[\r\n]", terminal) if part.strip()]
    assert redraws and all(len(part) <= 80 for part in redraws), max(redraws, key=len)
    assert any(part.startswith("collect") and "<" in part for part in redraws)  # elapsed<remaining: the ETA
    assert any(part.startswith("eval") and "10/10" in part for part in redraws)
    # The last line counts every step of the evaluation: it kept the first redraw's count (each env's first step).
    last_steps = int(re.search(r"(\d+) steps", [part for part in redraws if part.startswith("eval")][-1]).group(1))
    assert last_steps >= 10 * 8  # ten CartPole episodes of at least 8 steps each
    assert stdout.startswith("run ") and "\r" not in stdout and "collect  " not in stdout


def test_demo_leaves_no_files_and_prints_no_third_party_warnings(tmp_path):
    result = ding_env_command("demo", "--episodes", "1", "--envs", "2", "--manager", "subprocess", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert list(tmp_path.iterdir()) == []  # no MUJOCO_LOG.TXT
    assert result.stderr == ""  # no MuJoCo 'settotalmass' warnings, no ALE banner
    assert "mujoco" in result.stdout and "atari" in result.stdout


def test_a_policy_returning_too_few_actions_is_named(tmp_path):
    (tmp_path / "few.py").write_text(
        "import numpy as np\n\n\ndef act(obs):\n    return np.zeros(len(obs) - 1, np.int64)\n"
    )
    args = ("run", str(REPO / "configs" / "cartpole.py"), "--steps", "50", "--policy", "few:act", "--manager", "base")
    result = ding_env_command(*args, cwd=tmp_path)
    assert result.returncode == 1
    assert f"policy 'act' ({tmp_path / 'few.py'}:4) returned 7 actions (shape (7,)) for 8 observations" in result.stderr
    (tmp_path / "none.py").write_text("def act(obs):\n    pass\n")
    result = ding_env_command(*args[:-3], "none:act", "--manager", "base", cwd=tmp_path)
    assert f"policy 'act' ({tmp_path / 'none.py'}:1) returned None for 8 observations" in result.stderr


@pytest.mark.parametrize("source", ["gym_vector", "envpool"])
def test_run_evaluates_batch_envs_reproducibly(source):
    # An evaluator's episodes end at different steps: a Gymnasium vector env or an EnvPool pool cannot replay
    # static seeds per sub-env, and the vector env steps all its sub-envs or none.
    args = ("run", "configs/cartpole.py", "--steps", "200", "--set", "env.batch=4", "--set", "env.evaluator_env_num=4")
    args += ("--set", f"env.batch_source={source!r}")
    runs = [ding_env_command(*args, cwd=REPO) for _ in range(2)]
    for result in runs:
        assert result.returncode == 0, result.stderr
        assert "eval episodes        10" in result.stdout
    assert runs[0].stdout.splitlines()[-2:] == runs[1].stdout.splitlines()[-2:]  # eval return, stop value


@pytest.mark.parametrize("manager", ["base_v2", "subprocess_v2", "gym_vector"])
def test_run_takes_the_v2_and_gym_vector_managers(manager):
    result = ding_env_command("run", "configs/cartpole.py", "--steps", "200", "--manager", manager, cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert "eval return" in result.stdout


def test_run_manager_env_pool_says_how_to_run_envpool():
    # --manager env_pool was argparse's "invalid choice"; set in the config it said how to run EnvPool.
    result = ding_env_command("run", "configs/cartpole.py", "--manager", "env_pool", cwd=REPO)
    assert result.returncode == 2
    assert "--manager: type 'env_pool' is DI-engine's PoolEnvManager" in result.stderr
    assert "env.batch_source='envpool'" in result.stderr


DI_ENGINE_STYLE_ENV = """
import gymnasium as gym
import numpy as np
from ding_env import BaseEnv, BaseEnvTimestep
from ding_env.utils import ENV_REGISTRY


@ENV_REGISTRY.register("flips")
class FlipsEnv(BaseEnv):  # declares no class config: reads what its env section holds, as DI-engine's envs do
    def __init__(self, cfg):
        self._cfg = cfg
        self._n_bits = cfg.n_bits
        self._t = 0

    def seed(self, seed, dynamic_seed=True):
        self._rng = np.random.default_rng(seed)

    def reset(self):
        self._t = 0
        return np.zeros(self._n_bits, np.float32)

    def step(self, action):
        self._t += 1
        done = self._t >= self._cfg.max_episode_steps
        info = {"eval_episode_return": float(self._t), "truncated": done} if done else {}
        return BaseEnvTimestep(np.full(self._n_bits, self._t, np.float32), np.ones(1, np.float32), done, info)

    def close(self):
        pass

    def __repr__(self):
        return "FlipsEnv"

    observation_space = property(lambda self: gym.spaces.Box(0, np.inf, (self._n_bits,), np.float32))
    action_space = property(lambda self: gym.spaces.Discrete(self._n_bits))
    reward_space = property(lambda self: gym.spaces.Box(0, 1, (1,), np.float32))
"""

DI_ENGINE_CONFIG = """
from easydict import EasyDict

main_config = EasyDict(dict(
    exp_name='flips_dqn',
    env=dict(collector_env_num=2, evaluator_env_num=1, n_evaluator_episode=1, n_bits=3, max_episode_steps=5),
    policy=dict(cuda=False, model=dict(obs_shape=3, action_shape=3)),
    world_model=dict(lr=0.001),
))
create_config = EasyDict(dict(
    env=dict(type='flips', import_names=['flips_env']),
    env_manager=dict(type='subprocess'),
    policy=dict(type='dqn'),
    replay_buffer=dict(type='episode'),
))
"""


def test_run_takes_a_di_engine_config_of_an_env_that_declares_no_config(tmp_path):
    (tmp_path / "flips_env.py").write_text(DI_ENGINE_STYLE_ENV)
    (tmp_path / "flips_dqn_config.py").write_text(DI_ENGINE_CONFIG)
    result = ding_env_command("run", "flips_dqn_config.py", "--steps", "40", "--eval-episodes", "1", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "not used here: policy, world_model" in result.stderr
    assert "eval episodes" in result.stdout


def test_an_env_that_declares_its_config_keeps_its_env_section_checked(tmp_path):
    (tmp_path / "cfg.py").write_text("config = dict(env=dict(type='cartpole', n_bits=3), policy=dict(cuda=False))\n")
    result = ding_env_command("run", "cfg.py", "--steps", "40", cwd=tmp_path)
    assert result.returncode == 2 and "unknown key 'n_bits'" in result.stderr


def test_run_gives_an_env_its_section_over_its_class_config_as_di_engine_does(tmp_path):
    # A class that declares its config and reads its defaults from cfg, without BaseEnv.__init__ (DI-engine's way).
    module = DI_ENGINE_STYLE_ENV.replace(
        '@ENV_REGISTRY.register("flips")', '@ENV_REGISTRY.register("flips_with_config")'
    )
    module = module.replace(
        "    def __init__(self, cfg):",
        "    config = dict(n_bits=3, max_episode_steps=5)\n\n    def __init__(self, cfg):",
    )
    (tmp_path / "flips_env.py").write_text(module)
    (tmp_path / "cfg.py").write_text("config = dict(env=dict(type='flips_with_config', import_names=['flips_env']))\n")
    result = ding_env_command(
        "run", "cfg.py", "--steps", "40", "--eval-episodes", "1", "--manager", "base", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr


def test_a_reader_that_closes_the_output_early_ends_the_command_quietly():
    # `ding-env list | head -1`: the reader is gone before the command writes (os.pipe: the reading end closed).
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = subprocess.run(
            [sys.executable, "-m", "ding_env", "list"],
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert result.returncode == 141 and result.stderr == ""


@pytest.mark.parametrize(
    ("name", "described"), [("cartpole", "type 'cartpole'"), ("CartPole-v1", "DingEnvWrapper of env_id 'CartPole-v1'")]
)
def test_run_takes_an_env_type_or_a_gymnasium_id_without_a_config_file(name, described, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # no file of that name here
    sizes = ["--set", "env.collector_env_num=2", "--set", "env.evaluator_env_num=1"]
    code = main(["run", name, "--steps", "50", "--eval-episodes", "1", "--manager", "base", *sizes])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert f"ding-env run {name}: env {described}" in out.err
    assert "eval episodes        1" in out.out


def test_run_of_a_name_that_is_no_file_type_or_id_names_the_types(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["run", "cartpolee"]) == 2
    err = capsys.readouterr().err
    assert "'cartpolee' is no config file, registered env type (acrobot," in err
    assert "did you mean 'cartpole'?) or Gymnasium env id" in err
    # A class of the user's own is no name run takes: it says how to run one.
    assert main(["run", "my_module:MyEnv"]) == 2
    assert "config = dict(env=dict(type='my_env', import_names=['my_module']))" in capsys.readouterr().err


def test_check_takes_a_gymnasium_id_without_its_prefix(capsys):
    assert main(["check", "CartPole-v1", "--episodes", "1"]) == 0
    assert "passed:" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("CartPole-v9", "CartPole-v9: Gymnasium has no such env id (Environment version `v9`"),
        ("Pendulum-v0", "Please use `Pendulum-v1`"),
        ("gym:NoSuchEnv-v0", "gym:NoSuchEnv-v0: Gymnasium has no such env id"),
    ],
)
def test_run_of_an_env_id_no_registry_has_gives_gymnasiums_hint(name, said, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["run", name]) == 2
    assert said in capsys.readouterr().err


def test_run_of_an_env_id_a_missing_extra_registers_names_the_extra():
    code = "from ding_env.cli import main\nsys.exit(main(['run', 'MiniGrid-Empty-5x5-v0']))"
    result = run_without_modules(["minigrid"], code)
    assert result.returncode == 2
    assert "pip install 'ding-env[minigrid]'" in result.stderr


def test_run_of_an_env_type_beside_a_folder_of_its_name_runs_the_type(tmp_path, monkeypatch, capsys):
    (tmp_path / "cartpole").mkdir()  # as in dizoo/classic_control
    monkeypatch.chdir(tmp_path)
    sizes = ["--set", "env.collector_env_num=1", "--set", "env.evaluator_env_num=1"]
    assert main(["run", "cartpole", "--steps", "20", "--eval-episodes", "1", "--manager", "base", *sizes]) == 0
    assert "eval episodes        1" in capsys.readouterr().out


def test_a_warning_about_the_config_shows_no_line_of_the_command_itself(tmp_path):
    # Attributed to the first frame outside ding_env, a config warning named `<frozen runpy>:88` under
    # `python -m ding_env` (and the `ding-env` script's `sys.exit(main())` under the script).
    config = tmp_path / "served_config.py"
    config.write_text(
        "main_config = dict(env=dict(type='cartpole', collector_env_num=1, evaluator_env_num=1,\n"
        "    n_evaluator_episode=1, manager=dict(type='base', servers=['tcp://127.0.0.1:5555'])))\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "ding_env", "run", str(config), "--steps", "10"],
        capture_output=True,
        text=True,
        check=True,
    )
    warning = [line for line in result.stderr.splitlines() if "ignores servers" in line]
    assert len(warning) == 1 and warning[0].startswith("UserWarning: env.manager: type 'base' ignores servers")
    assert "runpy" not in result.stderr and "main()" not in result.stderr

import subprocess
import sys

import pytest

from ding_env.cli import main


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
            if line.startswith("collect ["):
                break
        run.send_signal(signal.SIGINT)
        err = run.stderr.read()
        assert run.wait(timeout=30) == 130
    finally:
        run.kill()
    assert "ding-env run: interrupted" in err and "Traceback" not in err
    leftovers = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
    assert leftovers == [] and set(os.listdir("/dev/shm")) <= segments

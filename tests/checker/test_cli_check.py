import json

from ding_env.cli import main


def test_clean_target_exits_zero(capsys):
    assert main(["check", "card_game"]) == 0
    out = capsys.readouterr()
    assert "passed: 12 checks, 0 errors" in out.out and "running check_spaces" in out.err


def test_broken_target_exits_one_with_fix_hints(capsys):
    assert main(["check", "tests.checker.broken_envs:Float64ObsEnv"]) == 1
    out = capsys.readouterr().out
    assert "[FAIL] check_reset_obs" in out and "fix:" in out


def test_json_output(capsys):
    assert main(["check", "configs/card_game.py", "--json", "--episodes", "1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["passed"] is True and "check_subprocess" in data["checks"]


def test_unimportable_target_is_a_usage_error(capsys):
    assert main(["check", "no.such.module:Env"]) == 2
    err = capsys.readouterr().err
    assert "cannot import module 'no.such.module'" in err and "Traceback" not in err
    assert main(["check", "not_registered"]) == 2
    assert main(["check", "json:dumps"]) == 2
    assert "not a BaseEnv subclass" in capsys.readouterr().err

import warnings

import pytest

from ding_env import deep_merge_dicts
from ding_env.cli import main
from ding_env.config import load_config_file, merge_known_keys, set_by_path
from ding_env.errors import ConfigError
from ding_env.run_config import build_managers, load_run_config


def test_deep_merge_leaves_inputs_untouched():
    base = {"a": 1, "nested": {"x": 1, "y": [1, 2]}}
    new = {"nested": {"y": [3]}, "b": 2}
    merged = deep_merge_dicts(base, new)
    assert merged == {"a": 1, "nested": {"x": 1, "y": [3]}, "b": 2}
    merged.nested.y.append(4)
    assert base == {"a": 1, "nested": {"x": 1, "y": [1, 2]}} and new == {"nested": {"y": [3]}, "b": 2}


def test_unknown_keys_are_listed():
    with pytest.raises(ConfigError, match=r"unknown key 'auto_rest' in the thing \(did you mean 'auto_reset'\?\)"):
        merge_known_keys({"auto_reset": True, "max_retry": 1}, {"auto_rest": False}, "the thing")


def test_set_by_path():
    cfg = {"env": {"manager": {}}}
    set_by_path(cfg, "env.manager.type", "subprocess")
    set_by_path(cfg, "env.new.key", 3)
    assert cfg["env"]["manager"]["type"] == "subprocess" and cfg["env"]["new"]["key"] == 3
    with pytest.raises(ConfigError, match="not a dict"):
        set_by_path(cfg, "env.manager.type.sub", 1)


def test_dizoo_configs_load_in_di_engine_shape():
    cfg = load_config_file("dizoo/classic_control/cartpole/config/cartpole_config.py")
    assert cfg.env.type == "cartpole" and cfg.env.manager.type == "subprocess"
    assert cfg.env.import_names == ["dizoo.classic_control.cartpole.envs"]
    assert cfg.env.collector_env_num == 8 and cfg.env.stop_value == 195


def test_single_config_dict_loads(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text("config = dict(env=dict(type='card_game', collector_env_num=2))\n")
    assert load_config_file(path).env.collector_env_num == 2


def test_bad_config_files(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_config_file(tmp_path / "missing.py")
    broken = tmp_path / "broken.py"
    broken.write_text("main_config = undefined_name\n")
    with pytest.raises(ConfigError, match="failed to load: NameError"):
        load_config_file(broken)
    di_engine = tmp_path / "di_engine_config.py"  # DI-engine is not installed beside ding-env
    di_engine.write_text("from ding.utils import set_pkg_seed\nmain_config = dict(env=dict(type='cartpole'))\n")
    with pytest.raises(ConfigError, match=r"No module named 'ding'; .*`ding-env port FOLDER` renames ding.envs"):
        load_config_file(di_engine)
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    with pytest.raises(ConfigError, match="neither 'config' nor 'main_config'"):
        load_config_file(empty)


# A user's config mistakes: each is one usage-error line (exit code 2) naming the file, the section or key,
# what was expected and what arrived, in `ding-env run` and `ding-env check` alike (no traceback: main() returns).
BAD_CONFIG_FILES = {
    "str_env.py": (
        "config = dict(env='cartpole')\n",
        "config['env'] (the env section) must be a dict (the env's keys), got str 'cartpole'",
    ),
    "list_config.py": (
        "config = [1, 2]\n",
        "'config' must be a dict of sections (exp_name, seed, env, ...), got list [1, 2]",
    ),
    "str_create.py": (
        "main_config = dict(env=dict(collector_env_num=1))\ncreate_config = 'oops'\n",
        "create_config must be a dict (DI-engine's env and env_manager entries), got str 'oops'",
    ),
    "str_create_env.py": (
        "main_config = dict(env=dict())\ncreate_config = dict(env='cartpole')\n",
        "create_config['env'] must be a dict (its type and import_names), got str 'cartpole'",
    ),
    "int_main_env.py": ("main_config = dict(env=5)\n", "main_config['env'] (the env section) must be a dict"),
    "c.json": ('{"env": {"type": "cartpole"}}\n', "expected a Python file (.py), got a .json file"),
    "c.yaml": ("env: {type: cartpole}\n", "expected a Python file (.py), got a .yaml file"),
}


@pytest.mark.parametrize("command", ["run", "check"])
@pytest.mark.parametrize("name", sorted(BAD_CONFIG_FILES))
def test_a_config_file_of_the_wrong_shape_or_kind_is_a_usage_error_naming_the_file_and_section(
    tmp_path, capsys, command, name
):
    text, message = BAD_CONFIG_FILES[name]
    path = tmp_path / name
    path.write_text(text)
    assert main([command, str(path)]) == 2
    err = capsys.readouterr().err
    assert f"ding-env {command}: config file {str(path)!r}: {message}" in err
    assert len(err.strip().splitlines()) == 1


def test_json_and_yaml_files_are_refused_saying_which_files_are_read(tmp_path, capsys):
    (tmp_path / "c.json").write_text('{"env": {"type": "cartpole"}}\n')
    assert main(["run", str(tmp_path / "c.json")]) == 2
    err = capsys.readouterr().err
    assert "a config is a Python file (.py) defining main_config and create_config" in err
    assert "JSON and YAML are not read" in err


def test_a_folder_given_as_the_config_is_named_a_folder(tmp_path, capsys):
    assert main(["run", str(tmp_path)]) == 2
    assert f"config file {str(tmp_path)!r} is a folder, not a file" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("override", "message"),
    [
        # It said 'env_manager' was not read, yet a file's env_manager.type picks the manager.
        ("env_manager.type='base'", "a config file's 'env_manager' is folded into the run config as it loads"),
        ("create_config.env_manager.type='base'", "its env_manager.type is env.manager.type"),
        ("policy.learn.lr=0.1", "'policy' is not read here; ding-env run reads only exp_name, seed, env"),
    ],
)
def test_set_of_a_section_run_does_not_read_is_a_usage_error_naming_the_key_to_set(tmp_path, capsys, override, message):
    err = run_refused(tmp_path, capsys, override)
    assert f"--set {override!r} would change nothing" in err and message in err


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("env=5", "the env section 'env' must be a dict of env keys, got int 5"),
        ("env.type=5", "env.type: expected the name of a registered env type, such as 'cartpole', got int 5"),
        ("env.type=[1]", "env.type: expected the name of a registered env type, such as 'cartpole', got list [1]"),
        ("exp_name=[1]", "'exp_name' must be a str (the run's name), got list [1]"),
        # A DingEnvWrapper key of the wrong kind: refused as each env was built, in its worker, after the launch.
        ("env.frame_stack='4'", "env section (type 'cartpole') config 'frame_stack': expected an int >= 1, got '4'"),
        ("env.env_wrapper='nonexistent'", "env section (type 'cartpole') config 'env_wrapper': expected a preset name"),
        # DI-engine's PoolEnvManager takes no env_fn: the run failed on that, in words of the Python API.
        ("env.manager.type='env_pool'", "env.manager: type 'env_pool' is DI-engine's PoolEnvManager, made from"),
    ],
)
def test_set_of_a_value_of_the_wrong_kind_is_a_usage_error_naming_the_file_and_key(tmp_path, capsys, override, message):
    assert f"ding-env run: {tmp_path / 'ok.py'}: {message}" in run_refused(tmp_path, capsys, override)


def run_refused(tmp_path, capsys, override: str) -> str:
    """The usage error of `ding-env run` of a small valid config with ``--set override``."""
    path = tmp_path / "ok.py"
    path.write_text("config = dict(env=dict(type='cartpole', collector_env_num=1, evaluator_env_num=1))\n")
    assert main(["run", str(path), "--set", override]) == 2
    return capsys.readouterr().err


def test_keys_saying_where_envs_run_that_the_managers_type_ignores_are_named():
    # servers without a remote type: the envs run here, which the run says (it ran locally without a word).
    cfg = load_run_config("configs/cartpole.py", ["env.manager.servers=['tcp://127.0.0.1:5555']"])
    with pytest.warns(UserWarning, match=r"env.manager: type 'subprocess' ignores servers, which only types ") as got:
        close_all(build_managers(cfg))
    assert got[0].filename == __file__  # the caller's line
    # With the type given on the command line (ding-env run --manager remote), nothing is ignored.
    servers = ["env.manager.servers=['tcp://127.0.0.1:5555']", "env.evaluator_manager.servers=['tcp://127.0.0.1:5556']"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        close_all(build_managers(load_run_config("configs/cartpole.py", servers), manager_type="remote"))
    evaluator = ["env.evaluator_manager.type='base'", "env.evaluator_manager.num_hosts=2"]
    with pytest.warns(UserWarning, match=r"env.evaluator_manager: type 'base' ignores num_hosts, which only types"):
        close_all(build_managers(load_run_config("configs/cartpole.py", evaluator)))
    # An evaluator of another type inherits the Ray collector's keys: nothing of its own is ignored.
    ray = ["env.manager.type='ray'", "env.manager.envs_per_host=4", "env.evaluator_manager.type='base'"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_run_config("configs/cartpole.py", ray)


def close_all(managers) -> None:
    for manager in managers:
        manager.close()


def test_an_evaluator_of_another_type_is_not_held_to_the_ray_collectors_host_counts():
    ray = ["env.manager.type='ray'", "env.manager.envs_per_host=4"]  # 8 collector envs on 2 hosts
    cfg = load_run_config("configs/cartpole.py", [*ray, "env.evaluator_manager.type='base'"])
    assert cfg.env.manager.envs_per_host == 4 and cfg.env.evaluator_manager.type == "base"
    # A Ray evaluator inherits them and is held to them: 5 envs do not split into hosts of 4.
    with pytest.raises(ConfigError, match=r"env.manager \(for the evaluator\): env manager config 'envs_per_host'"):
        load_run_config("configs/cartpole.py", ray)

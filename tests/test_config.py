import pytest

from ding_env import deep_merge_dicts
from ding_env.config import load_config_file, merge_known_keys, set_by_path
from ding_env.errors import ConfigError


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
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    with pytest.raises(ConfigError, match="neither 'config' nor 'main_config'"):
        load_config_file(empty)

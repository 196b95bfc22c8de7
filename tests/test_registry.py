import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ding_env import ENV_REGISTRY, BaseEnv, get_env_cls, get_vec_env_setting
from ding_env.errors import ConfigError, RegistryError
from ding_env.registry import Registry
from dizoo.card_game.envs import CardGameEnv
from tests.envs import CountingEnv

REPO = Path(__file__).resolve().parents[1]


def test_dizoo_types_are_registered_lazily_through_entry_points():
    for name in ("cartpole", "pendulum", "mountain_car", "acrobot", "card_game"):
        assert name in ENV_REGISTRY
    assert ENV_REGISTRY.source("cartpole") == "dizoo.classic_control.cartpole.envs.cartpole_env:CartPoleEnv"
    assert issubclass(ENV_REGISTRY.get("cartpole"), BaseEnv)


def test_decorator_and_lazy_string_entries():
    registry = Registry("thing")

    @registry.register("card")
    class Card:
        pass

    registry.register("lazy", "dizoo.card_game.envs.card_game_env:CardGameEnv")
    assert registry.get("card") is Card
    assert registry.get("lazy") is CardGameEnv
    with pytest.raises(RegistryError, match="registered twice"):
        registry.register("card", object())
    registry.register("card", object(), force_overwrite=True)


def test_unknown_type_lists_known_types_and_a_suggestion():
    with pytest.raises(RegistryError, match=r"unknown env type 'cartpol' \(did you mean 'cartpole'\?\).*card_game"):
        get_env_cls({"type": "cartpol"})
    with pytest.raises(RegistryError, match="has no 'type'"):
        get_env_cls({})


def test_bad_import_names_are_reported():
    with pytest.raises(RegistryError, match="cannot import 'no.such.module' listed in env.import_names"):
        get_env_cls({"type": "cartpole", "import_names": ["no.such.module"]})
    registry = Registry("thing")
    registry.register("broken", "no.such.module:Thing")
    with pytest.raises(RegistryError, match="cannot import module 'no.such.module'"):
        registry.get("broken")


def test_get_vec_env_setting_builds_independent_cfgs():
    cfg = {
        "type": "card_game",
        "import_names": ["dizoo.card_game.envs"],
        "collector_env_num": 2,
        "evaluator_env_num": 3,
    }
    env_fn, collector, evaluator = get_vec_env_setting(cfg)
    assert env_fn is CardGameEnv
    assert [c.is_train for c in collector] == [True, True]
    assert [c.is_train for c in evaluator] == [False, False, False]
    assert collector[0] is not collector[1]
    assert "is_train" not in cfg
    env = env_fn(collector[0])
    assert env.reset().shape == (1,)
    _, collector, evaluator = get_vec_env_setting(cfg, eval_=False)
    assert evaluator == []


def run_python(script, cwd):
    """``script`` in a fresh interpreter, so nothing is registered yet; warnings shown."""
    return subprocess.run(
        [sys.executable, "-W", "always", "-c", script],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(cwd), str(REPO)])},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("builtin_first", [False, True])
@pytest.mark.parametrize(
    ("name", "builtin_module"),
    [("cartpole", "dizoo.classic_control.cartpole.envs.cartpole_env"), ("petting_zoo", "dizoo.petting_zoo.envs")],
)
def test_a_users_type_replaces_the_builtin_one_of_its_name_whatever_the_import_order(
    tmp_path, builtin_first, name, builtin_module
):
    # A DI-engine env ported by renames registers 'cartpole'; the built-in types' modules register them by name only.
    module = tmp_path / "ported_env.py"
    module.write_text(
        "from ding_env.utils import ENV_REGISTRY\n"
        "from ding_env import BaseEnv\n\n\n"
        f"@ENV_REGISTRY.register({name!r})\n"
        "class PortedEnv(BaseEnv):\n"
        "    pass\n"
    )
    builtin = f"import {builtin_module}\n"
    script = (builtin if builtin_first else "") + "import ported_env\n" + builtin
    script += f"from ding_env import ENV_REGISTRY\nprint(ENV_REGISTRY.get({name!r}).__module__)\n"
    result = run_python(script, tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["ported_env"]
    assert f"env type {name!r}: ported_env:PortedEnv ({module}:5) replaces ding-env's built-in" in result.stderr


def test_the_env_the_readme_says_to_copy_registers_a_type_of_the_users_own(tmp_path):
    # Copied under a new name, it is a user's type: a second type of that name is an error, not a quiet replacement.
    source = (REPO / "dizoo" / "card_game" / "envs" / "card_game_env.py").read_text()
    (tmp_path / "my_game.py").write_text(source.replace('register("card_game"', 'register("my_game"'))
    script = (
        "import my_game\nfrom ding_env import ENV_REGISTRY\n\n\nclass Other(my_game.CardGameEnv):\n    pass\n\n\n"
        "ENV_REGISTRY.register('my_game', Other)\n"
    )
    result = run_python(script, tmp_path)
    assert result.returncode == 1
    assert "RegistryError" in result.stderr and "env type 'my_game' is registered twice" in result.stderr


def test_two_user_types_of_one_name_are_an_error_naming_both_places():
    registry = Registry("thing")
    registry.register("card", CardGameEnv)

    class OtherCard(CardGameEnv):
        pass

    with pytest.raises(
        RegistryError, match=r"'card' is registered twice: first by .*CardGameEnv .*again by .*OtherCard"
    ):
        registry.register("card", OtherCard)
    registry.register("card", OtherCard, force_overwrite=True)
    assert registry.get("card") is OtherCard


def test_registering_the_same_class_again_is_not_an_error():
    registry = Registry("thing")
    registry.register("card", "dizoo.card_game.envs.card_game_env:CardGameEnv")
    registry.register("card", CardGameEnv)
    registry.register("card", CardGameEnv)
    assert registry.get("card") is CardGameEnv


@pytest.mark.parametrize(
    ("cfg", "message"),
    [
        ("cartpole", "env section: expected a dict of env keys, got str 'cartpole'"),
        ({"type": 5}, "env.type: expected the name of a registered env type, such as 'cartpole', got int 5"),
        ({"type": ["cartpole"]}, "env.type: expected the name of a registered env type, such as 'cartpole', got list"),
    ],
)
def test_an_env_section_or_type_of_the_wrong_kind_is_a_config_error(cfg, message):
    # An AttributeError ('str' object has no attribute 'get') and TypeErrors of the registry's lookup before.
    with pytest.raises(ConfigError, match=re.escape(message)):
        get_env_cls(cfg)


@pytest.mark.parametrize(
    ("name", "package", "module", "cls"),
    [
        # The port's module replaces the built-in's at its import path, with a class of another name.
        ("acrobot", "dizoo.classic_control.acrobot.envs", "acrobot_env", "AcroBotEnv"),
        # The port's module sits beside the built-in's, which stays importable.
        ("mountain_car", "dizoo.classic_control.mountain_car.envs", "mtcar_env", "MountainCarEnv"),
    ],
)
def test_a_ported_dizoo_tree_gives_its_own_class_for_a_builtin_type_name(tmp_path, name, package, module, cls):
    """DI-engine's dizoo ported whole: looking a built-in type up by name gives the port's class."""
    # Packages that extend their path, as ours do: our dizoo modules stay reachable beside the port's.
    extend = "from pkgutil import extend_path\n\n__path__ = extend_path(__path__, __name__)\n"
    parts = package.split(".")
    for depth in range(1, len(parts) + 1):
        tmp_path.joinpath(*parts[:depth]).mkdir()
        tmp_path.joinpath(*parts[:depth], "__init__.py").write_text(extend)
    folder = tmp_path.joinpath(*parts)
    (folder / "__init__.py").write_text(extend + f"from .{module} import {cls}\n")
    (folder / f"{module}.py").write_text(
        "from ding_env import BaseEnv\nfrom ding_env.utils import ENV_REGISTRY\n\n\n"
        f"@ENV_REGISTRY.register({name!r})\nclass {cls}(BaseEnv):\n    pass\n"
    )
    lookup = f"get_env_cls({{'type': {name!r}}})"
    script = f"from ding_env import get_env_cls\nenv_cls = {lookup}\n"
    script += f"print(env_cls.__module__, env_cls.__name__)\nprint({lookup}.__name__)\n"
    result = run_python(script, tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == [f"{package}.{module}", cls, cls]
    assert "replaces ding-env's built-in" in result.stderr


def test_a_module_that_registers_its_type_then_fails_to_import_is_an_error_not_its_half_made_class(tmp_path):
    (tmp_path / "half_made.py").write_text(
        "from ding_env import BaseEnv\nfrom ding_env.utils import ENV_REGISTRY\n\n\n"
        "@ENV_REGISTRY.register('half_made')\nclass HalfMade(BaseEnv):\n    pass\n\n\n"
        "ENV_REGISTRY.register('half_made_path', 'half_made:HalfMade')\n"
        "import a_dependency_not_installed\n"
    )
    script = (
        "from ding_env import ENV_REGISTRY\n"
        "ENV_REGISTRY.register('half_made', 'half_made:HalfMade')\n"
        "ENV_REGISTRY.register('half_made_path', 'half_made:HalfMade')\n"
        "for name in ('half_made', 'half_made_path'):\n"
        "    try:\n"
        "        ENV_REGISTRY.get(name)\n"
        "    except Exception as error:\n"
        "        print(type(error).__name__, 'a_dependency_not_installed' in str(error))\n"
    )
    result = run_python(script, tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["RegistryError", "True", "RegistryError", "True"]


def test_an_env_sections_replay_path_records_nothing_as_in_di_engine(tmp_path):
    # Eleven of DI-engine's dizoo configs set env.replay_path: its eval entry records there, and no env reads it.
    # The envs built from such a section (DI-engine's collector and evaluator pattern, `ding-env check` and
    # `ding-env serve`) recorded every episode.
    from ding_env.checker.target import resolve_target

    section = {"type": "cartpole", "collector_env_num": 1, "evaluator_env_num": 1, "replay_path": str(tmp_path)}
    env_fn, collector_cfgs, evaluator_cfgs = get_vec_env_setting(section)
    config_file = tmp_path / "cartpole_config.py"
    config_file.write_text(f"main_config = dict(env={section!r})\ncreate_config = dict(env=dict(type='cartpole'))\n")
    checked_cls, checked_cfg = resolve_target(str(config_file))
    for env in (env_fn(collector_cfgs[0]), env_fn(evaluator_cfgs[0]), checked_cls(checked_cfg)):
        env.seed(0)
        env.reset()
        done = False
        while not done:
            done = env.step(env.random_action()).done
        env.close()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["cartpole_config.py"]


@ENV_REGISTRY.register("reads_its_replay_path")
class ReadsItsReplayPath(CountingEnv):
    """An env of DI-engine's kind (LightZero's) that reads cfg.replay_path itself."""

    config = dict(CountingEnv.config, replay_path=None)

    def __init__(self, cfg=None):
        super().__init__(cfg)
        self.replay_path = self._cfg.replay_path


def test_an_env_class_that_reads_the_sections_replay_path_gets_it_as_in_di_engine():
    section = {"type": "reads_its_replay_path", "collector_env_num": 1, "evaluator_env_num": 1, "replay_path": "v"}
    env_fn, collector_cfgs, evaluator_cfgs = get_vec_env_setting(section)
    assert env_fn(collector_cfgs[0]).replay_path == env_fn(evaluator_cfgs[0]).replay_path == "v"

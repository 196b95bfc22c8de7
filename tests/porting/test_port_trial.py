"""`ding-env port --try` on an env whose config `ding-env run` refuses: the envs are built as run builds them."""

from __future__ import annotations

from tests.porting.test_port import BROKEN_PACKAGE, port_json

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

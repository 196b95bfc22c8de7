"""A contract test mixin: the whole env check suite in an env author's own pytest.

Four lines::

    from ding_env.testing import EnvContractTests
    from my_pkg.my_env import MyEnv

    class TestMyEnv(EnvContractTests):
        env_cls = MyEnv

Each check becomes its own test, failing with the check's message and fix.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ding_env.checker import CHECKS
from ding_env.checker.rollout import CheckContext


class EnvContractTests:
    """Mix into a pytest class; set ``env_cls`` (and optionally ``env_cfg``, ``episodes``, ``max_steps``)."""

    env_cls: ClassVar[type | None] = None
    env_cfg: ClassVar[dict | None] = None
    episodes: ClassVar[int] = 3
    max_steps: ClassVar[int] = 1000
    seed: ClassVar[int] = 0

    def _run(self, check: Any) -> None:
        if self.env_cls is None:
            raise TypeError(f"{type(self).__name__} must set env_cls to the env class under test")
        cfg = self.env_cfg

        def make_env() -> Any:
            return self.env_cls(cfg) if cfg is not None else self.env_cls()

        errors = [
            f for f in check(CheckContext(make_env, self.episodes, self.max_steps, self.seed)) if f.severity == "error"
        ]
        if errors:
            raise AssertionError("\n".join(f"{f.message}\n  fix: {f.hint}" for f in errors))


def _make_test(check: Any) -> Any:
    def test(self: EnvContractTests) -> None:
        self._run(check)

    test.__doc__ = check.__doc__
    test.__name__ = f"test_{check.__name__.removeprefix('check_')}"
    return test


for _check in CHECKS:
    setattr(EnvContractTests, f"test_{_check.__name__.removeprefix('check_')}", _make_test(_check))

"""A contract test mixin: the whole env check suite in an env author's own pytest.

Four lines::

    from ding_env.testing import EnvContractTests
    from my_pkg.my_env import MyEnv

    class TestMyEnv(EnvContractTests):
        env_cls = MyEnv

Each check becomes its own test, failing with the check's message and fix. ``BatchEnvContractTests``
does the same for a ``BaseBatchEnv`` (set ``env_cls`` and ``env_cfg``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from ding_env.checker import CHECKS
from ding_env.checker.batch_checks import BATCH_CHECKS, BatchCheckContext
from ding_env.checker.rollout import CheckContext


class _ContractTests:
    """What both mixins share: building the env under test and failing with every error found."""

    env_cls: ClassVar[type | None] = None
    env_cfg: ClassVar[dict | None] = None
    seed: ClassVar[int] = 0

    def _make_env(self) -> Any:
        return self.env_cls(self.env_cfg) if self.env_cfg is not None else self.env_cls()

    def _require_env_cls(self) -> None:
        if self.env_cls is None:
            raise TypeError(f"{type(self).__name__} must set env_cls to the env class under test")

    @staticmethod
    def _assert_clean(findings: list) -> None:
        errors = [f for f in findings if f.severity == "error"]
        if errors:
            raise AssertionError("\n".join(f"{f.message}\n  fix: {f.hint}" for f in errors))


class EnvContractTests(_ContractTests):
    """Mix into a pytest class; set ``env_cls`` (and optionally ``env_cfg``, ``episodes``, ``max_steps``)."""

    episodes: ClassVar[int] = 3
    max_steps: ClassVar[int] = 1000

    def _run(self, check: Any) -> None:
        self._require_env_cls()
        self._assert_clean(check(CheckContext(self._make_env, self.episodes, self.max_steps, self.seed)))


class BatchEnvContractTests(_ContractTests):
    """Mix into a pytest class; set ``env_cls`` (a ``BaseBatchEnv``) and ``env_cfg`` (and optionally ``steps``)."""

    steps: ClassVar[int] = 200

    def _run(self, check: Any) -> None:
        self._require_env_cls()
        self._assert_clean(check(BatchCheckContext(self._make_env, self.steps, self.seed)))


def _make_test(check: Any) -> Any:
    def test(self: EnvContractTests | BatchEnvContractTests) -> None:
        self._run(check)

    test.__doc__ = check.__doc__
    test.__name__ = f"test_{check.__name__.removeprefix('check_')}"
    return test


for _check in CHECKS:
    setattr(EnvContractTests, f"test_{_check.__name__.removeprefix('check_')}", _make_test(_check))
for _check in BATCH_CHECKS:
    setattr(BatchEnvContractTests, f"test_{_check.__name__.removeprefix('check_')}", _make_test(_check))

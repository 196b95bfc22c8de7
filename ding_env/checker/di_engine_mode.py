"""``ding-env check --di-engine``: what DI-engine's own envs do and every manager accepts, reported as warnings.

DI-engine's envs may require a ``cfg`` in ``__init__``, declare gym (not Gymnasium) spaces, know
their spaces only after the first reset, return ``(1,)``-shaped random actions and leave
``info['truncated']`` out (the managers then read ``info['TimeLimit.truncated']`` or take the end
as termination). In DI-engine mode the checker builds such an env from its ``default_config()``
(or ``--config``) and turns those findings into warnings; everything else stays an error.
"""

from __future__ import annotations

import dataclasses
import inspect
import re

from ding_env.checker.report import ERROR, WARNING, Finding

# (check, what the finding's message matches, why the managers accept it)
TOLERATED = (
    ("check_spaces", r"is \w+, not a Gymnasium space", "gym spaces are converted to Gymnasium's by every manager"),
    ("check_spaces", r"spaces are None before the first reset", "every manager resets such an env once to read them"),
    ("check_random_action", r"must have shape \(\), got \(1,\)", "every manager takes a (1,) discrete action"),
    (
        "check_lazy_init",
        r"pickling the env before its first reset raised TypeError: RandomNumberGenerator",
        "legacy gym's seeded spaces do not pickle with numpy >= 1.25; the managers pickle env factories, not envs",
    ),
    (
        "check_step_output",
        r"info\['truncated'\] \(bool\) is missing",
        "the managers read info['TimeLimit.truncated'], else take the end as termination",
    ),
    (
        "check_time_limit",
        r"ended at the time limit .* as a termination",
        "DI-engine's envs end every episode as done; the managers take it as termination, as DI-engine did",
    ),
)


def tolerate(finding: Finding) -> Finding:
    """``finding`` as a warning when DI-engine's envs do this and the managers accept it."""
    why = _tolerated_because(finding)
    if why is None:
        return finding
    return dataclasses.replace(finding, severity=WARNING, message=f"{finding.message} (accepted: {why})")


def point_to_di_engine_mode(finding: Finding) -> Finding:
    """``finding`` with a word on ``--di-engine`` in its fix, when DI-engine mode would accept what it reports.

    An env written for DI-engine fails the strict checks on forms every manager accepts; its author should
    learn that from the first run, not from the docs.
    """
    if _tolerated_because(finding) is None:
        return finding
    return dataclasses.replace(
        finding,
        hint=f"{finding.hint} (or, for an env written for DI-engine, accept it: --di-engine; check_env(..., "
        "di_engine=True))",
    )


def _tolerated_because(finding: Finding) -> str | None:
    """Why DI-engine mode accepts ``finding``, an error (None: it does not)."""
    for check, pattern, why in TOLERATED:
        if finding.severity == ERROR and finding.check == check and re.search(pattern, finding.message):
            return why
    return None


def requires_cfg(env_cls: type) -> bool:
    """Whether ``env_cls(...)`` needs a positional ``cfg`` (DI-engine's ``__init__(self, cfg)``)."""
    try:
        parameters = list(inspect.signature(env_cls).parameters.values())
    except (TypeError, ValueError):  # builtins without a signature take what they take
        return False
    return (
        bool(parameters)
        and parameters[0].default is inspect.Parameter.empty
        and parameters[0].kind
        in (
            inspect.Parameter.POSITIONAL_ONLY,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
        )
    )

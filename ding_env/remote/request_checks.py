"""What a request's fields must hold beyond their types: the checks decoding alone cannot make.

``messages.read_request`` runs them on every request a server receives, before any env is touched:
reset params only for the envs reset, a step's actions one per env id, a call's kwargs by name.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ding_env.ops import Op
from ding_env.remote.errors import WireError
from ding_env.trees import leaves


def check_request_fields(kind: str, fields: dict) -> None:
    """Refuse a request of ``kind`` whose decoded ``fields`` do not fit together.

    Raises:
        WireError: Naming the request and what is wrong.
    """
    if kind == Op.RESET.value and fields["params"] is not None:
        params = fields["params"]
        if not (type(params) is dict and set(params) <= set(fields["env_ids"])) or not all(
            type(param) is dict for param in params.values()
        ):
            raise WireError("request 'reset': params must map env ids of the reset to dicts of env.reset kwargs")
    elif kind == Op.STEP.value:
        _check_action_rows(fields["env_ids"], fields["actions"])
    elif kind == Op.CALL.value and not (
        type(fields["kwargs"]) is dict and all(type(key) is str for key in fields["kwargs"])
    ):
        raise WireError("request 'call': kwargs must be a dict of str keys")


def _check_action_rows(env_ids: np.ndarray, actions: Any) -> None:
    """Refuse a step whose actions are not one row per env id (every leaf of a tree of stacked actions).

    Actions of a space without an array form travel as a list of values, one per env.
    """
    count = len(env_ids)
    for leaf in [actions] if type(actions) is np.ndarray else leaves(actions):
        if type(leaf) is np.ndarray:
            if leaf.ndim and len(leaf) == count:
                continue
            got = f"actions of shape {leaf.shape}"
        elif type(leaf) is list:
            if len(leaf) == count:
                continue
            got = f"a list of {len(leaf)} actions"
        else:
            got = f"actions of type {type(leaf).__name__}"
        raise WireError(f"request 'step': {count} env ids {env_ids.tolist()[:20]} need one action each, got {got}")

"""The shape every dizoo config shares: collector and evaluator envs of one env type, DI-engine's two dicts."""

from __future__ import annotations

from typing import Any

from easydict import EasyDict


def make_env_config(
    env_type: str,
    import_name: str,
    *,
    stop_value: float,
    collector_env_num: int,
    evaluator_env_num: int,
    n_evaluator_episode: int,
    manager_type: str = "subprocess",
    **env_keys: Any,
) -> tuple[EasyDict, EasyDict]:
    """``(main_config, create_config)`` for ``env_type`` (registered by the module ``import_name``).

    ``env_keys`` are the env type's own config keys; each config file comments the ones it sets.
    """
    main_config = EasyDict(
        dict(
            exp_name=env_type,
            env=dict(
                **env_keys,
                # Envs stepped by the collector (dynamic seeds, is_train=True).
                collector_env_num=collector_env_num,
                # Envs stepped by the evaluator (static seeds, is_train=False).
                evaluator_env_num=evaluator_env_num,
                # Episodes one evaluation runs, spread over the evaluator envs.
                n_evaluator_episode=n_evaluator_episode,
                # Mean evaluation return that counts as solved.
                stop_value=stop_value,
                # Env manager settings (see ding_env.env_manager.config).
                manager=dict(shared_memory=True),
            ),
        )
    )
    create_config = EasyDict(
        dict(env=dict(type=env_type, import_names=[import_name]), env_manager=dict(type=manager_type))
    )
    return main_config, create_config

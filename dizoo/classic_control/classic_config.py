"""The config every classic-control env shares; each env's file names its type and stop value."""

from __future__ import annotations

from easydict import EasyDict


def make_classic_control_config(
    env_type: str, stop_value: float, import_name: str | None = None
) -> tuple[EasyDict, EasyDict]:
    """``(main_config, create_config)`` in DI-engine's shape for an env type that wraps one Gymnasium id.

    Args:
        env_type: The registered env type.
        stop_value: Mean evaluation return that counts as solved.
        import_name: The module that registers the type (default: ``dizoo.classic_control.<env_type>.envs``).
    """
    main_config = EasyDict(
        dict(
            exp_name=env_type,
            env=dict(
                # Envs stepped by the collector (dynamic seeds, is_train=True).
                collector_env_num=8,
                # Envs stepped by the evaluator (static seeds, is_train=False).
                evaluator_env_num=5,
                # Episodes one evaluation runs, spread over the evaluator envs.
                n_evaluator_episode=5,
                # Mean evaluation return that counts as solved.
                stop_value=stop_value,
                # Env manager settings (see ding_env.env_manager.config).
                manager=dict(shared_memory=True),
            ),
        )
    )
    create_config = EasyDict(
        dict(
            env=dict(type=env_type, import_names=[import_name or f"dizoo.classic_control.{env_type}.envs"]),
            env_manager=dict(type="subprocess"),
        )
    )
    return main_config, create_config

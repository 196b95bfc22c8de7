"""The config every MuJoCo env shares; each env's file names its id and stop value."""

from __future__ import annotations

from easydict import EasyDict


def make_mujoco_config(env_id: str, stop_value: float) -> tuple[EasyDict, EasyDict]:
    """``(main_config, create_config)`` for one MuJoCo env."""
    main_config = EasyDict(
        dict(
            exp_name=env_id.split("-")[0].lower(),
            seed=0,
            env=dict(
                # Gymnasium id of the env.
                env_id=env_id,
                # Envs stepped by the collector (dynamic seeds).
                collector_env_num=4,
                # Envs stepped by the evaluator (static seeds).
                evaluator_env_num=4,
                # Episodes one evaluation runs, spread over the evaluator envs.
                n_evaluator_episode=4,
                # Mean evaluation return that counts as solved.
                stop_value=stop_value,
                # Actions in [-1, 1], mapped to the env's bounds.
                act_scale=True,
                # Env manager settings (ding_env/env_manager/config.py).
                manager=dict(shared_memory=True),
            ),
        )
    )
    create_config = EasyDict(
        dict(
            env=dict(type="mujoco", import_names=["dizoo.mujoco.envs"]),
            env_manager=dict(type="subprocess"),
        )
    )
    return main_config, create_config

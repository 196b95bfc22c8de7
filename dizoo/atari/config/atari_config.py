"""The config every Atari game shares; each game's file names its id and stop value."""

from __future__ import annotations

from easydict import EasyDict


def make_atari_config(env_id: str, stop_value: float) -> tuple[EasyDict, EasyDict]:
    """``(main_config, create_config)`` for one ALE game."""
    main_config = EasyDict(
        dict(
            exp_name=env_id.split("/")[-1].split("-")[0].lower(),
            seed=0,
            env=dict(
                # Gymnasium id of the game.
                env_id=env_id,
                # Envs stepped by the collector (episodic life, clipped rewards).
                collector_env_num=8,
                # Envs stepped by the evaluator (whole games, raw rewards).
                evaluator_env_num=4,
                # Episodes one evaluation runs, spread over the evaluator envs.
                n_evaluator_episode=4,
                # Mean evaluation return that counts as solved.
                stop_value=stop_value,
                # Frames per observation, and sticky-action probability.
                frame_stack=4,
                repeat_action_probability=0.25,
                # Env manager settings (ding_env/env_manager/config.py).
                manager=dict(shared_memory=True),
            ),
        )
    )
    create_config = EasyDict(
        dict(
            env=dict(type="atari", import_names=["dizoo.atari.envs"]),
            env_manager=dict(type="subprocess"),
        )
    )
    return main_config, create_config

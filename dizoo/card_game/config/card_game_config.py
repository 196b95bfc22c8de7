"""The card game: collector and evaluator envs, in DI-engine's main_config / create_config shape."""

from easydict import EasyDict

main_config = EasyDict(
    dict(
        exp_name="card_game",
        env=dict(
            # Envs stepped by the collector (dynamic seeds, is_train=True).
            collector_env_num=4,
            # Envs stepped by the evaluator (static seeds, is_train=False).
            evaluator_env_num=4,
            # Episodes one evaluation runs, spread over the evaluator envs.
            n_evaluator_episode=8,
            # Mean evaluation return that counts as solved (a perfect player scores about -3).
            stop_value=-4,
            # Steps after which a round is cut (reported as truncated).
            max_episode_steps=50,
            # Env manager settings (see ding_env.env_manager.config).
            manager=dict(shared_memory=True),
        ),
    )
)
create_config = EasyDict(
    dict(
        env=dict(type="card_game", import_names=["dizoo.card_game.envs"]),
        env_manager=dict(type="base"),
    )
)

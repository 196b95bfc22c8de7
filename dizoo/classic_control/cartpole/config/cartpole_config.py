"""CartPole-v1: collector and evaluator envs, in DI-engine's main_config / create_config shape."""

from easydict import EasyDict

main_config = EasyDict(
    dict(
        exp_name="cartpole",
        env=dict(
            # Envs stepped by the collector (dynamic seeds, is_train=True).
            collector_env_num=8,
            # Envs stepped by the evaluator (static seeds, is_train=False).
            evaluator_env_num=5,
            # Episodes one evaluation runs, spread over the evaluator envs.
            n_evaluator_episode=5,
            # Mean evaluation return that counts as solved.
            stop_value=195,
            # Env manager settings (see ding_env.env_manager.config).
            manager=dict(shared_memory=True),
        ),
    )
)
create_config = EasyDict(
    dict(
        env=dict(type="cartpole", import_names=["dizoo.classic_control.cartpole.envs"]),
        env_manager=dict(type="subprocess"),
    )
)

"""Pendulum-v1 with actions in [-1, 1] (``act_scale``)."""

from easydict import EasyDict

main_config = EasyDict(
    dict(
        # Name of the run, shown in the summary.
        exp_name="pendulum",
        # Base seed of the collector (dynamic) and evaluator (static) envs.
        seed=0,
        env=dict(
            # Envs stepped by the collector (is_train=True).
            collector_env_num=4,
            # Envs stepped by the evaluator (is_train=False).
            evaluator_env_num=4,
            # Episodes one evaluation runs, spread over the evaluator envs.
            n_evaluator_episode=4,
            # Mean evaluation return that counts as solved.
            stop_value=-250,
            # Actions are given in [-1, 1] and scaled to the torque bounds.
            act_scale=True,
            # Env manager settings (ding_env/env_manager/config.py).
            manager=dict(shared_memory=True),
        ),
    )
)
create_config = EasyDict(
    dict(
        # Registered env type and the module that registers it.
        env=dict(type="pendulum", import_names=["dizoo.classic_control.pendulum.envs"]),
        # 'base', 'subprocess' or 'async_subprocess'.
        env_manager=dict(type="subprocess"),
    )
)

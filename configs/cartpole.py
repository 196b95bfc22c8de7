"""CartPole-v1: the main job's config (``ding-env run configs/cartpole.py``)."""

from easydict import EasyDict

main_config = EasyDict(
    dict(
        # Name of the run, shown in the summary.
        exp_name="cartpole",
        # Base seed: collector envs draw dynamic per-episode seeds from it,
        # evaluator envs replay static ones.
        seed=0,
        env=dict(
            # Envs stepped by the collector (is_train=True).
            collector_env_num=8,
            # Envs stepped by the evaluator (is_train=False).
            evaluator_env_num=5,
            # Episodes one evaluation runs, spread over the evaluator envs.
            n_evaluator_episode=10,
            # Mean evaluation return that counts as solved.
            stop_value=195,
            # Env manager settings; every key is documented in
            # ding_env/env_manager/config.py (MANAGER_CONFIG).
            manager=dict(shared_memory=True, step_timeout=60.0, reset_timeout=60.0),
        ),
    )
)
create_config = EasyDict(
    dict(
        # Registered env type and the module that registers it.
        env=dict(type="cartpole", import_names=["dizoo.classic_control.cartpole.envs"]),
        # 'base', 'subprocess' or 'async_subprocess'.
        env_manager=dict(type="subprocess"),
    )
)

"""The card game, a custom ``BaseEnv`` (dizoo/card_game), as one ``config`` dict."""

config = dict(
    # Name of the run, shown in the summary.
    exp_name="card_game",
    # Base seed of the collector (dynamic) and evaluator (static) envs.
    seed=0,
    env=dict(
        # Registered env type and the module that registers it.
        type="card_game",
        import_names=["dizoo.card_game.envs"],
        # Envs stepped by the collector (is_train=True).
        collector_env_num=4,
        # Envs stepped by the evaluator (is_train=False).
        evaluator_env_num=4,
        # Episodes one evaluation runs, spread over the evaluator envs.
        n_evaluator_episode=20,
        # Mean evaluation return that counts as solved (a good player scores about -3).
        stop_value=-4,
        # Steps after which a round is cut (reported as truncated).
        max_episode_steps=50,
        # Env manager settings (ding_env/env_manager/config.py).
        manager=dict(type="base"),
    ),
)

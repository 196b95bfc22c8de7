"""DI-engine's own task-pipeline middleware driving ding_env's V2 managers, run in ``.venv-di-engine``.

``interaction_evaluator``, ``inferencer`` and ``rolloutor`` from ``ding.framework`` are the code
that DI-engine users' pipelines run; here they drive a ding_env manager in place of DI-engine's,
as ported code would after renaming ``ding.envs`` to ``ding_env``. The policy pushes the cart
towards the side the pole leans to, so it is deterministic and its returns vary.

Usage::

    .venv-di-engine/bin/python tests/env_manager/di_engine_pipeline.py MANAGER_TYPE ENV_NUM

Prints one JSON line: the evaluator's mean return, and the collector's episode returns.
"""

from __future__ import annotations

import json
import logging
import sys
import warnings
from pathlib import Path

warnings.simplefilter("ignore")
logging.disable(logging.WARNING)
sys.path.append(str(Path(__file__).resolve().parents[2]))  # after site-packages: DI-engine's dizoo wins

import torch  # noqa: E402
from ding.framework import OnlineRLContext  # noqa: E402
from ding.framework.middleware.functional import inferencer, rolloutor  # noqa: E402
from ding.framework.middleware.functional.collector import TransitionList  # noqa: E402
from ding.framework.middleware.functional.evaluator import interaction_evaluator  # noqa: E402
from easydict import EasyDict  # noqa: E402

from ding_env import DingEnvWrapper, create_env_manager  # noqa: E402

SEED = 0
EVAL_EPISODES = 4
COLLECT_CALLS = 150


class LeanPolicy:
    """DI-engine's policy interface: ``forward``, ``reset`` and ``process_transition``."""

    def forward(self, obs: dict, **kwargs) -> dict:
        return {env_id: {"action": torch.tensor(int(o[2] > 0))} for env_id, o in obs.items()}

    def reset(self, env_ids=None) -> None:
        pass

    def process_transition(self, obs, output: dict, timestep) -> dict:
        return {"obs": obs, "action": output["action"], "reward": timestep.reward, "done": timestep.done}


def make_manager(manager_type: str, env_num: int):
    env_fn = [lambda: DingEnvWrapper(cfg={"env_id": "CartPole-v1"})] * env_num
    return create_env_manager({"type": manager_type}, env_fn)


def main(manager_type: str, env_num: int) -> None:
    policy = LeanPolicy()
    cfg = EasyDict(
        seed=SEED,
        env=dict(n_evaluator_episode=EVAL_EPISODES, stop_value=195),
        policy=dict(eval=dict(evaluator=dict(eval_freq=1))),
    )
    evaluator_env = make_manager(manager_type, env_num)
    evaluate = interaction_evaluator(cfg, policy, evaluator_env)
    ctx = OnlineRLContext()
    evaluate(ctx)
    evaluator_env.close()

    collector_env = make_manager(manager_type, env_num)
    infer = inferencer(SEED, policy, collector_env)
    transitions = TransitionList(env_num)
    rollout = rolloutor(policy, collector_env, transitions)
    collect_ctx = OnlineRLContext()
    for _ in range(COLLECT_CALLS):
        infer(collect_ctx)
        rollout(collect_ctx)
    episodes = transitions.to_episodes()
    collector_env.close()
    print(
        json.dumps(
            {
                "eval_value": float(ctx.eval_value),
                "env_step": collect_ctx.env_step,
                "env_episode": collect_ctx.env_episode,
                "episode_lengths": sorted(len(episode) for episode in episodes),
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))

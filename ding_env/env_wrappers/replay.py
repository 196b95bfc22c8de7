"""``EpisodeVideoWrapper``: one MP4 per episode, named so that many envs can record into one folder.

Frames come from ``env.render()`` (the env must be made with
``render_mode='rgb_array'``) and are written with imageio's ffmpeg plugin
(the ``replay`` extra installs it, and so do ``atari`` and ``mujoco``). MuJoCo renders headless
through ``MUJOCO_GL=egl`` (set when unset) or ``osmesa``.
"""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from ding_env.extras import check_replay_modules


def replay_prefix(env_name: str) -> str:
    """A file-name prefix unique to this env instance: env name, process id and a random token."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", env_name).strip("_")
    return f"{safe}-pid{os.getpid()}-{uuid.uuid4().hex[:6]}"


class EpisodeVideoWrapper(gym.Wrapper):
    """Record every episode to ``<folder>/<prefix>-episode<k>.mp4``.

    Args:
        env: An env made with ``render_mode='rgb_array'``.
        folder: Where the videos go (created if missing).
        prefix: File-name prefix; :func:`replay_prefix` makes one unique per env.
    """

    def __init__(self, env: gym.Env, folder: str | Path, prefix: str) -> None:
        super().__init__(env)
        if env.render_mode != "rgb_array":
            raise ValueError(
                f"saving replays needs render_mode='rgb_array', but {env.spec.id if env.spec else env} "
                f"has render_mode={env.render_mode!r}"
            )
        check_replay_modules()  # fail now, not at the end of the first episode

        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.prefix = prefix
        self.episode = 0
        self.frames: list[np.ndarray] = []
        self.fps = int(env.metadata.get("render_fps") or 30)
        self.written: list[Path] = []

    def reset(self, **kwargs: Any) -> tuple[Any, dict]:
        """Write the episode in progress (if any), then start recording a new one."""
        self._flush()
        result = self.env.reset(**kwargs)
        self.frames = [self.env.render()]
        return result

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        """Step and keep the frame; write the video when the episode ends."""
        result = self.env.step(action)
        self.frames.append(self.env.render())
        if result[2] or result[3]:
            self._flush()
        return result

    def _flush(self) -> None:
        if len(self.frames) < 2:
            self.frames = []
            return
        import imageio

        path = self.folder / f"{self.prefix}-episode{self.episode:04d}.mp4"
        imageio.mimwrite(path, self.frames, fps=self.fps, macro_block_size=1)
        self.written.append(path)
        self.episode += 1
        self.frames = []

    def close(self) -> None:
        """Write what was recorded, then close the env."""
        self._flush()
        super().close()

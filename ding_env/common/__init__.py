"""DI-engine's ``ding.envs.common``: the helpers envs call (``affine_transform``, ``save_frames_as_gif``).

``from ding.envs.common import affine_transform`` and
``from ding.envs.common.common_function import affine_transform`` port by renaming ``ding.envs``
to ``ding_env``.
"""

from ding_env.common.common_function import affine_transform, save_frames_as_gif

__all__ = ["affine_transform", "save_frames_as_gif"]

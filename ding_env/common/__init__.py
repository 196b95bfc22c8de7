"""DI-engine's ``ding.envs.common``: the helpers envs call (``affine_transform``, ``save_frames_as_gif``, encoders).

With them, DI-engine's older env-info records ``EnvElement`` and ``EnvElementInfo`` (``env_element``)
and ``EnvElementRunner`` (``env_element_runner``).

``from ding.envs.common import affine_transform`` and
``from ding.envs.common.common_function import sqrt_one_hot`` port by renaming ``ding.envs``
to ``ding_env``.
"""

from ding_env.common import common_function
from ding_env.common.common_function import *  # noqa: F403 - DI-engine's ding.envs.common exports them all
from ding_env.common.env_element import EnvElement, EnvElementInfo
from ding_env.common.env_element_runner import EnvElementRunner

__all__ = [*common_function.__all__, "EnvElement", "EnvElementInfo", "EnvElementRunner"]

"""DI-engine's ``ding.envs.env_wrappers`` import path: the wrappers of ``ding_env.wrappers``.

``from ding.envs.env_wrappers import MaxAndSkipWrapper`` ports as
``from ding_env.env_wrappers import MaxAndSkipWrapper``.
"""

from ding_env.wrappers import *  # noqa: F403 - this module only re-exports the wrappers
from ding_env.wrappers import __all__  # noqa: F401

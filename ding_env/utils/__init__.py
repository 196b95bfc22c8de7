"""What DI-engine envs import from ``ding.utils`` and ``ding.torch_utils``, under one module.

A DI-engine env ports by renaming its imports (the table of docs/porting.md):
``ding.envs`` -> ``ding_env``, ``ding.utils`` -> ``ding_env.utils`` and ``ding.torch_utils`` ->
``ding_env.utils``. ``ENV_REGISTRY`` is ding_env's registry, so a ported env registers where
ding_env's managers and ``ding-env run`` look for it, never into DI-engine's.
"""

from ding_env.config import deep_merge_dicts
from ding_env.registry import ENV_REGISTRY
from ding_env.utils.data import to_list, to_ndarray, to_tensor

__all__ = ["ENV_REGISTRY", "deep_merge_dicts", "to_list", "to_ndarray", "to_tensor"]

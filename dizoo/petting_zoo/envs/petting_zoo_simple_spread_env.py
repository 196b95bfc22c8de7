"""DI-engine's module of the petting_zoo env type, which its configs list in ``import_names``.

DI-engine's class of that module is ``PettingZooEnv``; here it is the 'petting_zoo' type's own class.
"""

from dizoo.petting_zoo.envs.simple_spread_env import SimpleSpreadEnv

PettingZooEnv = SimpleSpreadEnv

__all__ = ["PettingZooEnv"]

"""Which DI-engine names the import renames bring into ding_env, and what to do about the others.

``IMPORT_RENAMES`` is the README's table: a DI-engine module and every module under it map to the
ding_env module named here; ``SUBMODULE_RENAMES`` adds the few modules under them whose names
ding_env keeps elsewhere (the longest matching prefix wins). :func:`resolve` says, for one
imported name, whether it exists after the rename, and if not, why: it belongs outside the env
layer (policies, models, pipelines, training utilities), it is one of DI-engine's manager types
ding-env does not have yet, or it is an env-layer name ding_env lacks.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
from dataclasses import dataclass

IMPORT_RENAMES = {
    "ding.envs": "ding_env",
    "ding.utils": "ding_env.utils",
    "ding.torch_utils": "ding_env.utils",
}
# Modules of those packages whose env-layer names ding_env keeps in another module than the table gives.
SUBMODULE_RENAMES = {
    "ding.utils.default_helper": "ding_env.utils",  # deep_merge_dicts
    "ding.utils.registry_factory": "ding_env.utils",  # ENV_REGISTRY
    "ding.torch_utils.data_helper": "ding_env.utils",  # to_ndarray, to_list, to_tensor
    "ding.envs.env.default_wrapper": "ding_env.env",  # get_default_wrappers
    "ding.envs.env.env_implementation_check": "ding_env.env",  # check_all, check_reset, ...
}
ALL_RENAMES = {**IMPORT_RENAMES, **SUBMODULE_RENAMES}
# Modules under those packages that serve training only: the rename leaves them on DI-engine.
OUTSIDE_MODULES = {
    # ding_env.utils.data is another module (to_ndarray, ...): renaming DI-engine's would import the wrong one.
    "ding.utils.data": "datasets and batch collation for training",
}
# Names of DI-engine modules beyond the table that ding_env has elsewhere: (module, name) -> ding_env module.
NAME_RENAMES = {
    ("ding.framework.supervisor", "ChildType"): "ding_env.env_manager.env_supervisor",  # EnvSupervisor's type_
    # DI-engine defines them beside BaseEnv; ding_env in its registry module.
    ("ding.envs.env.base_env", "get_env_cls"): "ding_env.registry",
    ("ding.envs.env.base_env", "get_vec_env_setting"): "ding_env.registry",
}

# DI-engine's packages beyond the env layer: what each holds, for the report.
OUTSIDE_PACKAGES = {
    "ding.policy": "policies",
    "ding.model": "models",
    "ding.framework": "task pipelines",
    "ding.worker": "collectors, evaluators, learners and replay buffers",
    "ding.entry": "training entry points",
    "ding.config": "config compilation",
    "ding.rl_utils": "RL losses and targets",
    "ding.league": "leagues",
    "ding.data": "replay buffers and datasets",
    "ding.reward_model": "reward models",
    "ding.world_model": "world models",
    "ding.bonus": "ready-made agents",
    "ding.hpc_rl": "CUDA kernels",
    "ding.example": "examples",
}

# Names of ding.utils / ding.torch_utils that serve training, not envs: what each is, for the report.
TRAINING_NAMES = {
    "Adam": "a torch optimizer",
    "to_device": "torch device moves",
    "to_dtype": "torch dtype casts",
    "to_item": "tensor-to-number conversion",
    "one_hot": "a torch one-hot encoder (ding_env.common has the env layer's encoders)",
    "tensor_to_list": "tensor-to-list conversion",
    "EasyTimer": "a training timer",
    "build_logger": "training loggers",
    "Scheduler": "a learning-rate scheduler",
    "set_pkg_seed": "global seeding of random, numpy and torch (envs seed their own generators)",
    "get_rank": "distributed training",
    "get_world_size": "distributed training",
    "dicts_to_lists": "batch collation",
    "default_collate": "torch batch collation",
    "default_decollate": "torch batch collation",
    "split_data_generator": "minibatch splitting",
    "fps": "render helpers of DI-engine's evaluators",
    "DDPContext": "distributed training",
    "DistContext": "distributed training",
    "dist_init": "distributed training",
    "to_ddp_config": "distributed training configs",
    "DataParallel": "multi-GPU training",
}

# DI-engine names ding-env does not have yet: the env_pool manager of its task pipelines.
NOT_YET = {"PoolEnvManagerV2": "DI-engine's env_pool manager for task pipelines"}
NOT_YET_FIX = (
    "not in ding-env yet: use PoolEnvManager (manager type 'env_pool') or SubprocessEnvManagerV2 for a pipeline"
)

RENAMED, OUTSIDE, NOT_IN_DING_ENV_YET, MISSING = "renamed", "outside the env layer", "not in ding-env yet", "missing"


@dataclass(frozen=True)
class Resolution:
    """What becomes of one DI-engine name after the rename.

    Attributes:
        name: The DI-engine name (``ding.envs.BaseEnv``, or a module).
        status: ``RENAMED`` (it exists as ``new``), ``OUTSIDE``, ``NOT_IN_DING_ENV_YET`` or ``MISSING``.
        new: The ding_env name the rename gives (None where nothing maps).
        fix: What to do when it does not exist.
    """

    name: str
    status: str
    new: str | None = None
    fix: str = ""


def rename_module(module: str) -> str | None:
    """The ding_env module for DI-engine's ``module`` by ``ALL_RENAMES``, or None when none maps."""
    if _outside_module(module) is not None:
        return None
    for old in sorted(ALL_RENAMES, key=len, reverse=True):
        if module == old or module.startswith(old + "."):
            return ALL_RENAMES[old] + module[len(old) :]
    return None


def resolve(module: str, name: str | None = None) -> Resolution:
    """What ``from module import name`` (or ``import module`` when ``name`` is None) becomes after the rename."""
    full = module if name is None else f"{module}.{name}"
    if full in NOT_YET or name in NOT_YET or module in NOT_YET:
        return Resolution(full, NOT_IN_DING_ENV_YET, None, f"{NOT_YET.get(name) or NOT_YET.get(module)}: {NOT_YET_FIX}")
    if name is not None and full in ALL_RENAMES:  # from ding import envs: a module of the table, by its name
        return Resolution(full, RENAMED, ALL_RENAMES[full])
    if (module, name) in NAME_RENAMES:
        return Resolution(full, RENAMED, f"{NAME_RENAMES[module, name]}.{name}")
    outside = _outside_module(module)
    if outside is not None:
        return Resolution(full, OUTSIDE, None, f"{outside}: keep importing it from DI-engine where training needs it")
    new_module = rename_module(module)
    if new_module is None:
        return Resolution(full, OUTSIDE, None, _outside_fix(full))
    new = new_module if name is None else f"{new_module}.{name}"
    if _exists(new_module, name):
        return Resolution(full, RENAMED, new)
    if name in TRAINING_NAMES or (name or "").endswith("_REGISTRY"):
        what = TRAINING_NAMES.get(name, "a registry of policies, models or workers (envs use ENV_REGISTRY)")
        return Resolution(full, OUTSIDE, None, f"{what}: keep importing it from DI-engine where training needs it")
    return Resolution(
        full,
        MISSING,
        new,
        f"{new} does not exist: keep importing {full} from DI-engine (pip install DI-engine) or copy what the env uses",
    )


def _outside_module(module: str) -> str | None:
    """What ``module`` holds when it is (under) one of ``OUTSIDE_MODULES``, else None."""
    for old, what in OUTSIDE_MODULES.items():
        if module == old or module.startswith(old + "."):
            return what
    return None


def _outside_fix(module: str) -> str:
    package = ".".join(module.split(".")[:2])
    what = OUTSIDE_PACKAGES.get(package, f"DI-engine's {package}")
    return f"{what}, outside the env layer: keep DI-engine installed for this code, or leave it out of the env package"


def _exists(module: str, name: str | None) -> bool:
    """Whether ding_env's ``module`` exists and has ``name`` (an attribute or a submodule)."""
    try:
        if importlib.util.find_spec(module) is None:
            return False
        if name is None:
            return True
        return (
            hasattr(importlib.import_module(module), name) or importlib.util.find_spec(f"{module}.{name}") is not None
        )
    except ImportError:  # a parent that is not a package (ding_env.utils.data.x) or fails to import
        return False


def imported_ding_names(tree: ast.AST) -> list[tuple[ast.stmt, str, str | None]]:
    """``(statement, module, name)`` for every DI-engine name ``tree`` imports (``name`` None for ``import module``)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and _is_ding(node.module):
            found += [(node, node.module, alias.name) for alias in node.names if alias.name != "*"]
        elif isinstance(node, ast.Import):
            found += [(node, alias.name, None) for alias in node.names if _is_ding(alias.name)]
    return found


def _is_ding(module: str | None) -> bool:
    return module is not None and (module == "ding" or module.startswith("ding."))

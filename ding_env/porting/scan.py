"""The static scan of ported code for known hazards (DI-engine's names: :mod:`ding_env.porting.imports`).

Hazards are what today's numpy, Gymnasium, legacy gym and PettingZoo do differently from what
DI-engine's env code was written against: numpy 1.x aliases, ``float()``/``int()`` of arrays,
gym 0.26's ``reset``/``step``/``seed``, Gymnasium 1.x removals (``reward_range``), PettingZoo's
MPE move to ``mpe2``. A hazard that ``--fix`` can apply carries its ``replacement``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ding_env.porting import numpy2
from ding_env.porting.findings import ERROR, HAZARDS, NOTE, WARNING, Item
from ding_env.porting.gym_envs import EnvMakers, GymHazards, dotted

MOVED_MODULES = {"pettingzoo.mpe": "mpe2"}  # PettingZoo 1.25 moved MPE into the mpe2 package
_GYMS = ("gym", "gymnasium")
_ARRAY_MAKERS = {"array", "asarray", "zeros", "ones", "full", "empty", "concatenate", "stack", "hstack", "vstack"}
_ARRAY_METHODS = {"astype", "reshape", "copy", "flatten", "ravel"}


@dataclass(frozen=True)
class Hazard:
    """A hazard at ``line``.

    A fixable one says what to replace: the code ``old`` at columns ``col:end_col`` of the line's
    UTF-8 bytes (or, when ``end_col`` is 0, a module name ``old`` on an import line) becomes ``replacement``.
    """

    line: int
    severity: str
    what: str
    fix: str
    col: int = 0
    end_col: int = 0
    old: str = ""
    replacement: str | None = None


def scan_hazards(tree: ast.AST, text: str, imported_makers: set[str] | frozenset[str] = frozenset()) -> list[Hazard]:
    """The known hazards in the module ``tree`` parsed from ``text``, in line order.

    ``imported_makers`` are the names the module imports from other modules of the port that make gym envs
    (:func:`env_makers`): what they return is followed as a gym env.
    """
    visitor = _HazardVisitor(tree, text, imported_makers)
    visitor.visit(tree)
    return sorted(visitor.hazards, key=lambda hazard: (hazard.line, hazard.col))


def hazard_items(path: str, hazards: list[Hazard]) -> list[Item]:
    """Hazards as report items, one per kind of hazard and line."""
    items = [Item(path, hazard.line, hazard.severity, hazard.what, hazard.fix, HAZARDS) for hazard in hazards]
    return list(dict.fromkeys(items))


# ding-env's (and DI-engine's) calls making an env or a manager with DI-engine's API from a gym env, besides
# the manager classes (``*EnvManager``): ``gym_env.env`` is DI-engine's ``ding.envs.gym_env.env``.
_DING_ENV_MAKERS = {"DingEnvWrapper", "create_env_manager", "setup_ding_env_manager", "EnvSupervisor", "env"}


def env_makers(tree: ast.Module, imported_makers: set[str] | frozenset[str] = frozenset()) -> set[str]:
    """The module's top-level functions that return a gym env (a make of gym, or a wrapper of one).

    Other modules of the port that import them get their envs followed by the scan (``imported_makers``).
    """
    return _HazardVisitor(tree, "", imported_makers).makers.top_level(tree)


def _make_call(node: ast.AST) -> ast.Call | None:
    """The ``make(...)`` call ``node`` is, or None when it is something else (a wrapper around one, say)."""
    return node if isinstance(node, ast.Call) and (dotted(node.func) or "").endswith("make") else None


def _record_video_classes(tree: ast.AST) -> set[str]:
    """The module's classes deriving from ``RecordVideo`` (DI-engine's ``PTZRecordVideo``)."""
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef) and any((dotted(base) or "").endswith("RecordVideo") for base in node.bases)
    }


def _is_str(node: ast.AST | None) -> bool:
    """Whether ``node`` is a string literal."""
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _is_ding_module(module: str | None) -> bool:
    return module is not None and module.split(".")[0] in ("ding", "ding_env")


def _makes_parallel_env(node: ast.AST) -> bool:
    """Whether ``node`` calls a PettingZoo ``parallel_env`` (``simple_spread_v3.parallel_env(...)`` or an alias)."""
    return any(
        isinstance(call, ast.Call) and (dotted(call.func) or "").rpartition(".")[2] == "parallel_env"
        for call in ast.walk(node)
    )


class _HazardVisitor(GymHazards, ast.NodeVisitor):
    """Walks one module, knowing the names it imports numpy, gym and Gymnasium as."""

    def __init__(self, tree: ast.AST, text: str, imported_makers: set[str] | frozenset[str] = frozenset()) -> None:
        self.text = text
        self.hazards: list[Hazard] = []
        self.numpy, self.gym, self.gymnasium = {"numpy"}, set(), set()
        self.gym_names: set[str] = set()  # names imported from gym or Gymnasium (``from gym import Wrapper``)
        # ``{bound name: what it names}`` for ding-env's (or DI-engine's) imports: what their env makers
        # (``_DING_ENV_MAKERS``) make from a gym env has DI-engine's API, seed() and 4-field steps included.
        self.ding: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and _is_ding_module(node.module):
                self.ding.update((alias.asname or alias.name, alias.name) for alias in node.names)
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] in _GYMS:
                self.gym_names.update(alias.asname or alias.name for alias in node.names)
            if isinstance(node, ast.Import):
                for alias in node.names:
                    bound = alias.asname or alias.name.split(".")[0]
                    if _is_ding_module(alias.name):
                        self.ding[bound] = alias.name
                    if alias.name == "numpy":
                        self.numpy.add(bound)
                    elif alias.name in ("gym", "gymnasium"):
                        self.gym.add(bound)
                    if alias.name == "gymnasium":
                        self.gymnasium.add(bound)
        self.array_names: set[str] = set()  # names (and self.attrs) bound to arrays of ndim >= 1
        self.other_names: set[str] = set()  # names bound to something else somewhere in the module
        self.gym_envs: set[str] = set()  # names (and self.attrs) bound to gym.make(...) envs
        self.gymnasium_envs: set[str] = set()  # those made by Gymnasium's make: no reward_range in Gymnasium 1.x
        self.parallel_envs: set[str] = set()  # names (and self.attrs) bound to PettingZoo parallel envs
        self.unrendered: set[str] = set()  # names bound to a make without render_mode (RecordVideo cannot record)
        self.rendered: set[str] = set()  # names bound somewhere to a make with a render_mode, or to **kwargs
        self.makers = EnvMakers(
            tree,
            self.gym,
            self.gym_names,
            set(imported_makers),
            lambda node: self._makes_gym_env(node, self.gym),
            self._makes_ding_env,
        )
        self.record_video = {"RecordVideo"} | _record_video_classes(tree)
        self.wrapper_classes: list[bool] = []  # per class being visited: whether it wraps a gym env (self.env)
        self.atari_functions: list[bool] = []  # per function being visited: whether it names NoFrameskip ids
        self.reported_ids: set[int] = set()  # Atari id constants already reported with their make() call
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in (dotted(target) for target in targets):
                    if target and self._array_like(node.value):
                        self.array_names.add(target)
                    elif target:
                        self.other_names.add(target)
                    if target and self._makes_gym_env(node.value, self.gym):
                        self.gym_envs.add(target)
                        made = _make_call(node.value)
                        rendered = made is None or any(k.arg in ("render_mode", None) for k in made.keywords)
                        (self.rendered if rendered else self.unrendered).add(target)
                    if target and self._makes_gym_env(node.value, self.gymnasium):
                        self.gymnasium_envs.add(target)
                    if target and _makes_parallel_env(node.value):
                        self.parallel_envs.add(target)
            elif isinstance(node, (ast.For, ast.comprehension)):  # loop variables are bound to anything
                self.other_names.update(dotted(sub) or "" for sub in ast.walk(node.target))
            elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                self.other_names.update(dotted(sub) or "" for sub in ast.walk(node.optional_vars))
            elif isinstance(node, ast.arg):  # parameters are bound to whatever the caller passes
                self.other_names.add(node.arg)
        # Envs a helper of the port makes (self._env = self._make_env()), or a wrapper of such an env.
        assigns = [node for node in ast.walk(tree) if isinstance(node, ast.Assign)]
        for _ in range(2):  # a name bound to a wrapper of a name bound before it
            for node in assigns:
                if self.makers.is_env(node.value, self.gym_envs):
                    self.gym_envs.update(filter(None, (dotted(target) for target in node.targets)))

    # ---- what values are ------------------------------------------------

    def _array_like(self, node: ast.AST) -> bool:
        """Whether ``node`` surely makes an array of ndim >= 1 (a literal list, a shape, a stack, ...)."""
        if isinstance(node, ast.BinOp):
            return self._array_like(node.left) or self._array_like(node.right)
        if not isinstance(node, ast.Call):
            return False
        name = dotted(node.func) or ""
        root, _, attr = name.rpartition(".")
        literal = bool(node.args) and isinstance(node.args[0], (ast.List, ast.Tuple, ast.ListComp))
        if root in self.numpy and attr in _ARRAY_MAKERS:
            return literal if attr in ("array", "asarray") else True
        if name.rpartition(".")[2] == "to_ndarray":
            return literal
        if isinstance(node.func, ast.Attribute) and node.func.attr in _ARRAY_METHODS:
            return self._array_like(node.func.value) or dotted(node.func.value) in self.array_names
        return False

    def _makes_gym_env(self, node: ast.AST, modules: set[str]) -> bool:
        """Whether ``node`` holds a ``make`` of ``modules`` that no ding-env call (``DingEnvWrapper(...)``) wraps."""
        if isinstance(node, ast.Call):
            name = dotted(node.func) or ""
            if name.rpartition(".")[0] in modules and name.endswith(".make"):
                return True
            if self._makes_ding_env(name):
                return False
        return any(self._makes_gym_env(child, modules) for child in ast.iter_child_nodes(node))

    def _makes_ding_env(self, called: str) -> bool:
        """Whether the call ``called`` (a dotted name) is one of ding-env's env makers, by an import of ding-env's."""
        root, _, attr = called.partition(".")
        if root not in self.ding:
            return False
        maker = called.rpartition(".")[2] if attr else self.ding[root]
        return maker in _DING_ENV_MAKERS or maker.endswith(("EnvManager", "EnvManagerV2"))

    def _add(self, node: ast.AST, severity: str, what: str, fix: str) -> None:
        self.hazards.append(Hazard(node.lineno, severity, what, fix))

    # ---- the visits -----------------------------------------------------

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_module(node, alias.name)
            if alias.name == "gym":
                self._add(
                    node,
                    NOTE,
                    "legacy gym: gym 0.26's passive env checker fails on numpy 2",
                    "nothing to do: ding-env makes that checker run on numpy 2 when a BaseEnv is built; "
                    "see the gym 0.26 API findings below, if any",
                )
            if alias.name == "imp":
                self._add(node, WARNING, "`import imp`: removed in Python 3.12", "use importlib")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module and node.level == 0:
            self._check_module(node, node.module)
        if node.module == "numpy":
            for alias in node.names:
                if alias.name in numpy2.REMOVED:
                    self._add(node, ERROR, f"numpy.{alias.name}: removed in numpy 2", numpy2.fix_text(alias.name, "np"))

    def _check_module(self, node: ast.AST, module: str) -> None:
        for old, new in MOVED_MODULES.items():
            if module == old or module.startswith(old + "."):
                moved = f"{new}{module[len(old) :]}"
                what = f"{module}: PettingZoo 1.25 moved MPE to the mpe2 package"
                fix = f"import {moved} (ding-env port --fix does it)"
                self.hazards.append(Hazard(node.lineno, ERROR, what, fix, old=module, replacement=moved))

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.value, ast.Name) and node.value.id in self.numpy and node.attr in numpy2.REMOVED:
            alias, span = node.value.id, (node.col_offset, node.end_col_offset or 0)
            what, fix = f"{alias}.{node.attr}: removed in numpy 2", numpy2.fix_text(node.attr, alias)
            replacement = numpy2.replacement(node.attr, alias) if node.end_lineno == node.lineno else None
            self.hazards.append(Hazard(node.lineno, ERROR, what, fix, *span, f"{alias}.{node.attr}", replacement))
        elif node.attr == "reward_range" and isinstance(node.ctx, ast.Load):
            # Sure for an env Gymnasium made: Gymnasium 1.x has no reward_range, and (-inf, inf) was its default.
            owner = dotted(node.value)
            sure = owner in self.gymnasium_envs and node.lineno == node.end_lineno
            what = "`.reward_range`: Gymnasium 1.x envs and wrappers no longer have it"
            fix = "use (-float('inf'), float('inf')), Gymnasium's old default, or the reward space's bounds" + (
                " (ding-env port --fix writes the first)" if sure else " (legacy gym envs still have it)"
            )
            span = (node.col_offset, node.end_col_offset or 0)
            old = ast.get_source_segment(self.text, node) or ""
            replacement = '(-float("inf"), float("inf"))' if sure else None
            self.hazards.append(Hazard(node.lineno, WARNING, what, fix, *span, old, replacement))
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        self._check_atari_preset(node, {keyword.arg: keyword.value for keyword in node.keywords if keyword.arg})
        name = dotted(node.func) or ""
        self._check_record_video(node, name)
        self._check_atari_id(node, name)
        if name in ("float", "int") and len(node.args) == 1 and not node.keywords:
            argument = node.args[0]
            if self._array_like(argument) or dotted(argument) in self.array_names:
                # Sure when the argument is only ever bound to such arrays: then --fix takes the element.
                sure = node.lineno == node.end_lineno and dotted(argument) not in self.other_names
                segment = ast.get_source_segment(self.text, argument) or ast.unparse(argument)
                fixed = f"{name}({segment}.item())"
                what = f"`{ast.unparse(node)}`: {name}() of an array with ndim > 0 is a TypeError in numpy 2"
                fix = f"take its element: {fixed}" + (" (ding-env port --fix does it)" if sure else "")
                old = ast.get_source_segment(self.text, node) or ""
                span = (node.col_offset, node.end_col_offset or 0)
                self.hazards.append(Hazard(node.lineno, WARNING, what, fix, *span, old, fixed if sure else None))
        owner, _, method = name.rpartition(".")
        if self._is_gym_env(owner) and method == "seed":
            self._add(
                node,
                WARNING,
                f"`{name}()`: gym >= 0.26 and Gymnasium envs have no seed()",
                f"seed the next reset instead: {owner}.reset(seed=...)",
            )
        if method == "render" and any(keyword.arg == "mode" for keyword in node.keywords):
            self._add(
                node,
                WARNING,
                f"`{name}(mode=...)`: gym >= 0.26 and Gymnasium take no render mode here",
                "give render_mode to make() and call render() without it",
            )
        if name in ("np.random.seed", "numpy.random.seed", "random.seed"):
            self._add(
                node,
                NOTE,
                f"`{name}()` seeds the global generator, which every env in the process shares",
                "seed a generator of the env's own (np.random.default_rng(seed)); `ding-env check` reports it",
            )
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        value = node.value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
            owner, method = dotted(value.func.value), value.func.attr
            target = node.targets[0]
            if self._is_gym_env(owner) and method == "reset" and isinstance(target, (ast.Name, ast.Attribute)):
                self._add(
                    node,
                    WARNING,
                    f"`{ast.unparse(node)}`: reset() returns (obs, info) in gym >= 0.26 and Gymnasium",
                    f"{ast.unparse(target)}, info = {ast.unparse(value)}",
                )
            if owner in self.parallel_envs and method == "reset" and isinstance(target, (ast.Name, ast.Attribute)):
                self._add(
                    node,
                    WARNING,
                    f"`{ast.unparse(node)}`: a PettingZoo parallel env's reset() returns (observations, infos) "
                    "since PettingZoo 1.22",
                    f"{ast.unparse(target)}, infos = {ast.unparse(value)}",
                )
            if self._is_gym_env(owner) and method == "step" and isinstance(target, ast.Tuple) and len(target.elts) == 4:
                self._add(
                    node,
                    WARNING,
                    f"`{ast.unparse(target)} = ...step()`: step() returns 5 values in gym >= 0.26 and Gymnasium",
                    "obs, reward, terminated, truncated, info = ...step(action); done = terminated or truncated "
                    "(keep truncated: info['truncated'] = truncated)",
                )
        self.generic_visit(node)

    def visit_Dict(self, node: ast.Dict) -> None:
        keys = {key.value: value for key, value in zip(node.keys, node.values, strict=True) if _is_str(key)}
        self._check_atari_preset(node, keys)
        self.generic_visit(node)

    def _check_atari_preset(self, node: ast.AST, keys: dict[str, ast.AST]) -> None:
        """DI-engine's 'atari_default' scaled frames to float32 in [0, 1]; ding-env's gives uint8 unless told."""
        preset = keys.get("env_wrapper")
        if _is_str(preset) and preset.value == "atari_default" and "scale_obs" not in keys:
            self._add(
                preset,
                WARNING,
                "env_wrapper='atari_default' gives uint8 frames in 0..255, where DI-engine's preset scaled them "
                "to float32 in [0, 1] (a network trained on DI-engine's frames sees inputs 255 times larger)",
                "set scale_obs=True beside it for DI-engine's frames, or scale in the model",
            )

    def visit_Constant(self, node: ast.Constant) -> None:
        self._check_atari_constant(node)
        if isinstance(node.value, str) and node.value.startswith("pettingzoo.mpe"):
            self._add(node, WARNING, f"{node.value!r}: PettingZoo 1.25 moved MPE to the mpe2 package", "name mpe2")

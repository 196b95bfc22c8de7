"""Which functions of ported code make gym envs, and which classes wrap one: what the gym 0.26 scan follows.

DI-engine's envs rarely call ``gym.make`` where they use the env: a helper makes it and wraps it
(``wrap_deepmind`` in the Atari-style envs), a method calls that helper (``self._env = self._make_env()``),
and ``gym.Wrapper`` subclasses reach the env as ``self.env``. A function is an env maker when one of its
``return`` values is a ``make`` of gym or Gymnasium, a name bound in it to one (or to a wrapper of one), or
a call of another maker of the port; a call is a wrapper of an env when its callee is named ``*Wrapper``,
is under ``gym.wrappers`` or is a wrapper class of the module, and its first argument is an env. A call of
ding-env's (``DingEnvWrapper(...)``, a manager) is never a gym env: its envs have DI-engine's API.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from ding_env.porting.findings import WARNING

WRAPPER_BASES = {"Wrapper", "ObservationWrapper", "RewardWrapper", "ActionWrapper"}
# A legacy Atari id: ale-py registers none with legacy gym, and none of the -ram ones with Gymnasium.
_ATARI_ID = re.compile(
    r"^(?P<game>[A-Z][A-Za-z]*?)(?P<ram>-ram)?(?P<kind>NoFrameskip|Deterministic)?-v(?P<version>[04])$"
)
ATARI_SETUP = "import ale_py; gymnasium.register_envs(ale_py)"


def legacy_atari_id(env_id: str) -> tuple[bool, str] | None:
    """Whether ``env_id`` is a legacy Atari id with ``-ram``, and the Gymnasium call making the same env.

    None for another id (plain ``Pong-v4`` is left out: ``CartPole-v0`` has the same shape). The same env:
    ``NoFrameskip`` is frameskip 1, ``Deterministic`` 4, neither (2, 5); v4 has no sticky actions, v0 0.25.
    """
    match = _ATARI_ID.match(env_id)
    if match is None or not (match["ram"] or match["kind"]):
        return None
    frameskip = {"NoFrameskip": "1", "Deterministic": "4"}.get(match["kind"] or "", "(2, 5)")
    sticky = "0.0" if match["version"] == "4" else "0.25"
    ram = ", obs_type='ram'" if match["ram"] else ""
    same = f"gymnasium.make('ALE/{match['game']}-v5'{ram}, frameskip={frameskip}, repeat_action_probability={sticky})"
    return bool(match["ram"]), same


def dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for a chain of attributes on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


class EnvMakers:
    """The env makers and gym wrapper classes of one module.

    Args:
        tree: The module.
        gym_modules: The names the module binds gym and Gymnasium to (``gym``).
        gym_names: Names the module imports from gym or Gymnasium (``Wrapper`` of ``from gym import Wrapper``).
        imported: Names the module imports from other modules of the port that are env makers there.
        makes_gym_env: Whether an expression holds a ``make`` of gym that no ding-env call wraps.
        makes_ding_env: Whether a called dotted name is one of ding-env's env makers.
    """

    def __init__(
        self,
        tree: ast.AST,
        gym_modules: set[str],
        gym_names: set[str],
        imported: set[str],
        makes_gym_env: Callable[[ast.AST], bool],
        makes_ding_env: Callable[[str], bool],
    ) -> None:
        self._gym_modules, self._makes_gym_env, self._makes_ding_env = gym_modules, makes_gym_env, makes_ding_env
        self.wrapper_classes = _wrapper_classes(tree, gym_modules, gym_names)
        # Callable spellings: a module function's name, a method's ``self.name``, an imported maker's bound name.
        self.makers: set[str] = set(imported)
        functions = [
            (node, "self." + node.name if method else node.name)
            for node, method in _functions(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        ]
        changed = True
        while changed:  # a maker may call a maker defined after it
            changed = False
            for function, spelling in functions:
                if spelling not in self.makers and self._returns_env(function):
                    self.makers.add(spelling)
                    changed = True

    def top_level(self, tree: ast.Module) -> set[str]:
        """The module's top-level functions that are makers: what other modules of the port may import."""
        names = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
        return names & self.makers

    def is_env(self, node: ast.AST, env_names: set[str]) -> bool:
        """Whether ``node`` is a gym env: a make, one of ``env_names``, a maker's call or a wrapper of an env."""
        if self._makes_gym_env(node):
            return True
        name = dotted(node)
        if name is not None:
            return name in env_names
        if not isinstance(node, ast.Call):
            return False
        called = dotted(node.func) or ""
        if not called or self._makes_ding_env(called):
            return False
        if called in self.makers:
            return True
        root, _, last = called.rpartition(".")
        wrapper = last.endswith("Wrapper") or last in self.wrapper_classes or ".wrappers" in f".{root}"
        first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "env"), None)
        return wrapper and first is not None and self.is_env(first, env_names)

    def _returns_env(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        env_names: set[str] = set()
        nodes = list(ast.walk(function))
        for _ in range(2):  # a name bound to a wrapper of a name bound before it
            for node in nodes:
                if isinstance(node, ast.Assign) and self.is_env(node.value, env_names):
                    env_names.update(filter(None, (dotted(target) for target in node.targets)))
        return any(
            isinstance(node, ast.Return) and node.value is not None and self.is_env(node.value, env_names)
            for node in nodes
        )


def _functions(tree: ast.AST) -> list[tuple[ast.AST, bool]]:
    """Every function of the module, with whether it is a method (defined directly in a class body)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            found += [
                (child, True) for child in node.body if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            ]
    methods = {id(node) for node, _ in found}
    found += [
        (node, False)
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and id(node) not in methods
    ]
    return found


def _wrapper_classes(tree: ast.AST, gym_modules: set[str], gym_names: set[str]) -> set[str]:
    """The module's classes deriving from a gym or Gymnasium wrapper, directly or through another of them."""
    classes = [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for klass in classes:
            if klass.name in found:
                continue
            for base in (dotted(base) or "" for base in klass.bases):
                root, _, last = base.rpartition(".")
                gym_base = last in WRAPPER_BASES and (
                    root.split(".")[0] in gym_modules or (not root and last in gym_names)
                )
                if gym_base or base in found:
                    found.add(klass.name)
                    changed = True
                    break
    return found


class GymHazards:
    """The scan's checks of gym and Gymnasium envs the module makes (mixed into the scan's visitor).

    The visitor sets ``gym``, ``gymnasium`` (the names the modules are bound to), ``gym_envs``,
    ``unrendered`` and ``rendered`` (names bound to envs), ``makers`` (:class:`EnvMakers`), ``record_video``
    (RecordVideo and the module's subclasses of it), the stacks ``wrapper_classes`` and ``atari_functions``,
    ``reported_ids``, and ``_add(node, severity, what, fix)``.
    """

    def _is_gym_env(self, owner: str) -> bool:
        """Whether the dotted name ``owner`` holds a gym env where it is used: ``self.env`` in a gym wrapper too."""
        return owner in self.gym_envs or (
            owner == "self.env" and bool(self.wrapper_classes) and self.wrapper_classes[-1]
        )

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        """Visit a class knowing whether it wraps a gym env, which its methods reach as ``self.env``."""
        self.wrapper_classes.append(node.name in self.makers.wrapper_classes)
        self.generic_visit(node)
        self.wrapper_classes.pop()

    def _check_record_video(self, node: ast.Call, name: str) -> None:
        """RecordVideo (gym >= 0.26, Gymnasium) records only an env made with render_mode='rgb_array'."""
        if name.rpartition(".")[2] not in self.record_video:
            return
        wrapped = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "env"), None)
        owner = dotted(wrapped) if wrapped is not None else None
        if owner in self.unrendered and owner not in self.rendered:
            self._add(
                node,
                WARNING,
                f"`{name}({owner}, ...)`: {owner} is made without render_mode, and RecordVideo refuses such an env "
                "in gym >= 0.26 and Gymnasium ('Render mode is None'); ding-env run records evaluator replays when "
                "the config sets env.replay_path",
                "make the env with render_mode='rgb_array' (Gymnasium's RecordVideo also needs moviepy), or run "
                "without replays: --set env.replay_path=none",
            )

    def _check_atari_id(self, node: ast.Call, name: str) -> None:
        """Atari envs made by legacy gym, or with a -ram id: ale-py registers neither."""
        module = name.rpartition(".")[0]
        if not (name.endswith(".make") and module in self.gym and node.args):
            return
        legacy = module not in self.gymnasium
        if not (isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            if legacy and self.atari_functions and self.atari_functions[-1]:
                self._add(
                    node,
                    WARNING,
                    f"`{ast.unparse(node)}` makes Atari envs (the function names NoFrameskip ids) with legacy gym, "
                    "where ale-py registers none",
                    f"make them with Gymnasium: {ATARI_SETUP}; gymnasium.make(env_id) for a NoFrameskip-v4 id; a -ram "
                    "id is gone: gymnasium.make('ALE/Pong-v5', obs_type='ram', frameskip=1, "
                    "repeat_action_probability=0.0) is Pong-ramNoFrameskip-v4",
                )
            return
        found = legacy_atari_id(node.args[0].value)
        if found is not None and (legacy or found[0]):
            self.reported_ids.add(id(node.args[0]))
            where = "legacy gym" if legacy else "Gymnasium (ale-py registers no -ram ids)"
            self._add(
                node,
                WARNING,
                f"`{name}({node.args[0].value!r})`: no such env in {where}; ale-py registers its Atari ids with "
                "Gymnasium only",
                f"{ATARI_SETUP}; {found[1]} is the same env",
            )

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        """Visit a function knowing whether it names Atari's NoFrameskip ids (then its makes make Atari envs)."""
        texts = (sub.value for sub in ast.walk(node) if isinstance(sub, ast.Constant) and isinstance(sub.value, str))
        self.atari_functions.append(any("NoFrameskip" in text for text in texts))
        self.generic_visit(node)
        self.atari_functions.pop()

    def _check_atari_constant(self, node: ast.Constant) -> None:
        """A -ram Atari id anywhere (a config's env_id): ale-py registers none, with Gymnasium or legacy gym."""
        found = legacy_atari_id(node.value) if isinstance(node.value, str) else None
        if found is not None and found[0] and id(node) not in self.reported_ids:
            self._add(
                node,
                WARNING,
                f"{node.value!r}: ale-py registers no -ram Atari ids, with Gymnasium or legacy gym",
                f"{ATARI_SETUP}; {found[1]} is the same env",
            )

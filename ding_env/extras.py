"""The pip extras optional env families need, and what a user without one is told.

Each hint names the extra to install (``pip install 'ding-env[box2d]'``), not the third-party
package's own advice: Gymnasium suggests ``pip install swig`` for Box2D, which the ``box2d``
extra does not need (it installs wheels).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence

# Module prefix of a registered env type -> (its pip extra, the modules that extra installs and the type imports).
EXTRAS_OF_TYPES = {
    "dizoo.atari.": ("atari", ("ale_py", "cv2")),
    "dizoo.mujoco.": ("mujoco", ("mujoco",)),
    "dizoo.box2d.": ("box2d", ("Box2D",)),
    "dizoo.minigrid.": ("minigrid", ("minigrid",)),
    "dizoo.petting_zoo.": ("pettingzoo", ("pettingzoo", "mpe2")),
}
# Gymnasium env families (``env_wrappers.family``) whose simulator comes with the extra of the family's name.
FAMILY_EXTRAS = ("atari", "box2d", "minigrid", "mujoco")
# The modules that record replays (the `replay` extra; `atari` and `mujoco` install them too).
REPLAY_MODULES = ("imageio", "imageio_ffmpeg")


def install_command(extra: str) -> str:
    """The command that installs ``extra``."""
    return f"pip install 'ding-env[{extra}]'"


def needs_extra(what: str, extra: str, cause: object) -> str:
    """The message for ``what`` failing without ``extra``: the cause and the command that installs it."""
    return f"{what} needs the {extra} extra ({cause}); install it with: {install_command(extra)}"


def missing_modules(modules: Sequence[str]) -> list[str]:
    """Those of ``modules`` that cannot be imported here (found without importing them)."""
    return [module for module in modules if importlib.util.find_spec(module) is None]


def extra_of(source: str) -> tuple[str, tuple[str, ...]] | None:
    """The extra the env type defined at ``source`` (``'module:Name'``) needs and its modules, or None."""
    return next((needs for prefix, needs in EXTRAS_OF_TYPES.items() if source.startswith(prefix)), None)


def extras_status(source: str) -> str:
    """``'-'`` for an env type that needs no extra, else its extra and whether its modules are installed."""
    needs = extra_of(source)
    if needs is None:
        return "-"
    missing = missing_modules(needs[1])
    return f"{needs[0]}: missing {', '.join(missing)}" if missing else f"{needs[0]}: installed"


def missing_extra(source: str, what: str) -> str | None:
    """Why the env type defined at ``source``, called ``what`` in the message, cannot run here, or None.

    Returns:
        ``needs_extra``'s message when the type's extra is not installed, else None.
    """
    needs = extra_of(source)
    missing = missing_modules(needs[1]) if needs is not None else []
    if not missing:
        return None
    return needs_extra(what, needs[0], f"no module {', '.join(missing)}")


def check_replay_modules() -> None:
    """Raise ``ImportError`` naming the ``replay`` extra when the modules that write replays are missing."""
    missing = missing_modules(REPLAY_MODULES)
    if missing:
        raise ImportError(needs_extra("saving replays", "replay", f"no module {', '.join(missing)}"))

"""Exceptions raised by ding_env.

Every error is a ``RuntimeError`` or ``ValueError`` subclass so code written
against DI-engine, which raises the builtins, keeps catching them; the state errors
(``EnvStateError``, ``ClosedEnvError``) are ``AssertionError`` s too, as DI-engine asserts its states.
"""

from __future__ import annotations

import inspect
import traceback

from ding_env.ops import Op


class DingEnvError(RuntimeError):
    """Base class of the runtime errors raised by ding_env.

    They pickle (a process pool or Ray hands them back from another process) whatever their constructor takes:
    unpickling restores the message and every attribute without calling ``__init__`` again.
    """

    def __reduce__(self) -> tuple:
        # Attributes in __slots__ (a subclass may declare them) are not in __dict__; setstate sets both kinds.
        slots = (name for klass in type(self).__mro__ for name in getattr(klass, "__slots__", ()))
        state = {**{name: getattr(self, name) for name in slots if hasattr(self, name)}, **self.__dict__}
        return _restore_error, (type(self), self.args), state


class ClosedEnvError(DingEnvError, AssertionError):
    """An env or env manager was used after ``close()`` (an ``AssertionError`` too, as DI-engine's asserts were)."""


class EnvStateError(DingEnvError, AssertionError):
    """A call was made in a state that does not allow it, e.g. step before launch (an ``AssertionError`` too)."""


class ConfigError(ValueError):
    """A config holds an unknown key or a value of the wrong kind."""


class EnvNotReadyError(ValueError):
    """An action was given to an env that cannot take one now (a ``ValueError``, as before it had a class).

    Its episode ended without auto-reset, it failed, or it ran its ``episode_num`` episodes.

    Attributes:
        env_id: The env given an action it cannot take.
    """

    def __init__(self, message: str, env_id: int) -> None:
        super().__init__(message)
        self.env_id = env_id

    __reduce__ = DingEnvError.__reduce__  # pickles whole, as ding_env's runtime errors do


class RegistryError(KeyError):
    """An env type is not registered, or cannot be imported."""

    def __str__(self) -> str:
        # KeyError quotes its argument; show the message as written.
        return str(self.args[0]) if self.args else ""


class EnvDataError(ValueError):
    """An env produced data (obs, reward, done) outside its declared spaces."""


def where_defined(function: object) -> str:
    """``file:line`` where ``function`` is defined ('' for one without Python source)."""
    try:
        return f"{inspect.getsourcefile(function)}:{inspect.getsourcelines(function)[1]}"
    except (TypeError, OSError):
        return ""


class NotATimestepError(EnvDataError):
    """An env's ``step()`` returned something other than a timestep (a plain tuple, say).

    Attributes:
        where: ``file:line`` of the env class's ``step`` ('' when unknown).
    """

    def __init__(self, message: str, where: str = "") -> None:
        super().__init__(message)
        self.where = where

    @classmethod
    def of(cls, env: object, value: object) -> NotATimestepError:
        """The error for ``value``, which ``env.step`` returned."""
        where = where_defined(type(env).step)
        what = f"a {type(value).__name__} of {len(value)} items" if isinstance(value, (tuple, list)) else type(value)
        return cls(
            f"{type(env).__name__}.step() returned {what}, not a BaseEnvTimestep (obs, reward, done, info by "
            "name): return transition(obs, reward), termination(obs, reward, episode_return) or "
            "truncation(obs, reward, episode_return) from ding_env.env.timestep",
            where,
        )


class EnvError(DingEnvError):
    """An exception raised inside an env, re-raised in the manager's process.

    Attributes:
        env_id: Index of the env in its manager.
        command: What the manager asked the env to do: the operation ('reset', 'step', ...), or for an
            env call the attribute's name ('render', ...).
        op: The operation, as an ``Op`` (``Op.CALL`` for a method call named by ``command``).
        message: What went wrong, without the env id, command and traceback around it.
        remote_traceback: The traceback text of the original exception.
    """

    def __init__(
        self, env_id: int, command: str, message: str, remote_traceback: str = "", op: Op | str | None = None
    ) -> None:
        self.env_id = env_id
        self.command = str(command)
        self.op = Op(command if op is None else op)
        self.message = message
        self.remote_traceback = remote_traceback
        text = self.summary
        if remote_traceback:
            text += f"\n--- traceback in the env's process ---\n{remote_traceback}"
        super().__init__(text)

    @property
    def summary(self) -> str:
        """The error in one line: the env, what it was asked and the message (no traceback)."""
        return f"env {self.env_id} failed in {self.command}: {self.message}"

    @classmethod
    def of(cls, error: BaseException, env_id: int, command: Op, name: str = "") -> EnvError:
        """``error``, raised while env ``env_id`` ran ``command`` (on its attribute ``name``), with its traceback."""
        message, remote = f"{type(error).__name__}: {error}", "".join(traceback.format_exception(error))
        return cls(env_id, name or command, message, remote, command)


class EnvCrashedError(DingEnvError):
    """A worker process died (segfault, ``os._exit``, SIGKILL, OOM kill).

    Attributes:
        env_ids: The envs hosted by the dead worker.
        exitcode: The worker's exit code (negative: killed by that signal).
        command: What the worker was doing (an ``Op``), or None.
        hint: Ends the message: what the death likely means, where the manager can tell ('' else).
    """

    def __init__(
        self, env_ids: list[int], exitcode: int | None, command: Op | str | None = None, hint: str = ""
    ) -> None:
        self.env_ids = list(env_ids)
        self.exitcode = exitcode
        self.command = Op(command) if command else None
        self.hint = hint
        during = f" during {command}" if command else ""
        super().__init__(f"worker hosting envs {self.env_ids} died{during} with exit code {exitcode}{hint}")


class EnvTimeoutError(DingEnvError):
    """Envs did not answer within ``step_timeout`` / ``reset_timeout``.

    One error names every env that timed out in the same step or reset (envs hung in several workers
    at once), in id order, so no one of them reads as the only problem.

    Attributes:
        env_ids: The envs that did not answer.
        command: The command they were running (an ``Op``).
        timeout: The limit in seconds.
        grouped: Some of the envs timed out together, as one worker or one batch env hosting them: those
            waiting behind one that hangs are named too. False: each env named was cut on its own (the serial managers,
            a worker per env).
    """

    # Ids named in the message; the rest are counted (env_ids holds them all).
    NAMED_IDS = 8

    def __init__(self, env_ids: list[int], command: Op | str, timeout: float, grouped: bool = False) -> None:
        self.env_ids = list(env_ids)
        self.command = Op(command)
        self.timeout = timeout
        self.grouped = grouped
        ids = self.env_ids
        if len(ids) > self.NAMED_IDS:
            named = f"[{', '.join(map(str, ids[: self.NAMED_IDS]))}, ... {len(ids) - self.NAMED_IDS} more]"
        else:
            named = str(ids)
        # A worker hosting several envs, or a batch env, times out as a whole: the envs named need not all have hung.
        whole = (
            " (a worker or a batch env times out as a whole: its envs wait behind one that hangs)"
            if grouped and len(ids) > 1
            else ""
        )
        super().__init__(f"envs {named} did not finish {self.command} within {timeout} s{whole}")


class EpisodeStepLimitError(DingEnvError):
    """An evaluation episode ran ``max_episode_steps`` steps without ending.

    Attributes:
        env_id: The env whose episode did not end.
        max_episode_steps: The bound it reached.
    """

    def __init__(self, env_id: int, max_episode_steps: int, episodes_done: int, n_episode: int) -> None:
        self.env_id = env_id
        self.max_episode_steps = max_episode_steps
        super().__init__(
            f"evaluator env {env_id} ran {max_episode_steps} steps in one episode without it ending "
            f"(the evaluation's bound, max_episode_steps={max_episode_steps}; {episodes_done} of {n_episode} episodes "
            "done): give the env "
            "a time limit that ends its episodes as truncated (gymnasium's TimeLimit, its own max_episode_steps), "
            "or raise the bound if its episodes are that long"
        )


def _restore_error(cls: type[BaseException], args: tuple) -> BaseException:
    """An error of ``cls`` with ``args`` whose attributes pickle puts back (``DingEnvError.__reduce__``)."""
    return cls.__new__(cls, *args)

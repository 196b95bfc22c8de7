"""Findings and the report that collects them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ding_env.summary import counted

ERROR = "error"
WARNING = "warning"


@dataclass(frozen=True)
class Finding:
    """One problem a check found.

    Attributes:
        check: Name of the check (``check_reset_obs`` ...).
        severity: ``'error'`` (breaks the contract) or ``'warning'`` (suspicious).
        message: What is wrong.
        hint: The most likely cause and how to fix it.
        count: How many times the check saw it (steps, for a problem of the steps).
        first_step: The step (counted over all episodes of the rollout, from 1) where it was first seen.
        cause: For a finding made from an exception the env raised (or a fault the checker found in its
            output while driving it), that exception's first line: a later check meeting it again only
            repeats the finding, and is skipped. Not part of the JSON report.
    """

    check: str
    severity: str
    message: str
    hint: str = ""
    count: int = 1
    first_step: int | None = None
    cause: str | None = field(default=None, compare=False, repr=False)

    def describe(self) -> str:
        """The message with how often and where first, for a finding seen more than once or at a step."""
        seen = []
        if self.count > 1:
            seen.append(f"{self.count} times")
        if self.first_step is not None:
            seen.append(f"first at step {self.first_step}")
        return f"{self.message} ({', '.join(seen)})" if seen else self.message


@dataclass
class CheckReport:
    """The result of :func:`ding_env.checker.check_env`.

    Attributes:
        target: What was checked.
        checks: Names of every check that ran, in order.
        findings: Everything they found.
        skipped: Checks not run, each with the failed check it would only repeat.
        heading: The first line of ``format()``: what runs these checks (the ``ding-env check`` command when None).
    """

    target: str
    checks: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    heading: str | None = None

    @property
    def errors(self) -> list[Finding]:
        """Findings with severity 'error'."""
        return [finding for finding in self.findings if finding.severity == ERROR]

    @property
    def warnings(self) -> list[Finding]:
        """Findings with severity 'warning'."""
        return [finding for finding in self.findings if finding.severity == WARNING]

    @property
    def passed(self) -> bool:
        """True when no check found an error."""
        return not self.errors

    def to_dict(self) -> dict:
        """A JSON-ready dict."""
        return {
            "target": self.target,
            "passed": self.passed,
            "checks": self.checks,
            "findings": [{k: v for k, v in asdict(finding).items() if k != "cause"} for finding in self.findings],
            "skipped": self.skipped,
        }

    def format(self) -> str:
        """One line per check, a fix hint under each failure, and a summary."""
        lines = [self.heading or f"ding-env check {self.target}"]
        for check in self.checks:
            if check in self.skipped:
                lines.append(f"  [skip] {check} (not run: {self.skipped[check]} failed, which would explain it)")
                continue
            found = [finding for finding in self.findings if finding.check == check]
            worst = ERROR if any(f.severity == ERROR for f in found) else WARNING if found else "ok"
            mark = {"ok": "ok  ", WARNING: "WARN", ERROR: "FAIL"}[worst]
            lines.append(f"  [{mark}] {check}")
            for finding in found:
                lines.append(f"         {finding.severity}: {finding.describe()}")
                if finding.hint:
                    lines.append(f"         fix: {finding.hint}")
        verdict = "passed" if self.passed else "FAILED"
        counts = (counted(len(self.checks), "check"), counted(len(self.errors), "error"))
        lines.append(f"{verdict}: {', '.join(counts)}, {counted(len(self.warnings), 'warning')}")
        return "\n".join(lines)


def exception_of(finding: Finding) -> str | None:
    """The exception's first line, for an error finding made from one (see ``rollout.raised``), else None.

    A later check that meets the same exception only repeats the first finding: the checkers skip it.
    """
    return finding.cause if finding.severity == ERROR else None

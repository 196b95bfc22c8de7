"""Findings and the report that collects them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

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
    """

    check: str
    severity: str
    message: str
    hint: str = ""


@dataclass
class CheckReport:
    """The result of :func:`ding_env.checker.check_env`.

    Attributes:
        target: What was checked.
        checks: Names of every check that ran, in order.
        findings: Everything they found.
    """

    target: str
    checks: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

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
            "findings": [asdict(finding) for finding in self.findings],
        }

    def format(self) -> str:
        """One line per check, a fix hint under each failure, and a summary."""
        lines = [f"ding-env check {self.target}"]
        for check in self.checks:
            found = [finding for finding in self.findings if finding.check == check]
            worst = ERROR if any(f.severity == ERROR for f in found) else WARNING if found else "ok"
            mark = {"ok": "ok  ", WARNING: "WARN", ERROR: "FAIL"}[worst]
            lines.append(f"  [{mark}] {check}")
            for finding in found:
                lines.append(f"         {finding.severity}: {finding.message}")
                if finding.hint:
                    lines.append(f"         fix: {finding.hint}")
        verdict = "passed" if self.passed else "FAILED"
        lines.append(f"{verdict}: {len(self.checks)} checks, {len(self.errors)} errors, {len(self.warnings)} warnings")
        return "\n".join(lines)

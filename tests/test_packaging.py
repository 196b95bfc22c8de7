"""Packaging: what `make demo` and `make test` install builds without warnings the user has to read."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# The build backend's hook as pip runs it for `pip install -e .`: pip shows the UserWarnings it records.
BUILD_EDITABLE = """
import json, sys, warnings
from setuptools import build_meta
with warnings.catch_warnings(record=True) as caught:
    wheel = build_meta.build_editable(sys.argv[1])
print(json.dumps({"wheel": wheel, "warnings": [
    f"{w.category.__name__}: {w.message}" for w in caught if issubclass(w.category, UserWarning)
]}))
"""


def test_the_editable_install_builds_without_build_backend_warnings(tmp_path):
    project = tmp_path / "project"  # a copy: the build writes build/ and *.egg-info beside setup.py
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build")
    project.mkdir()
    for name in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy(REPO / name, project / name)
    for package in ("ding_env", "dizoo"):
        shutil.copytree(REPO / package, project / package, ignore=ignore)
    result = subprocess.run(
        [sys.executable, "-c", BUILD_EDITABLE, str(tmp_path)],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    built = json.loads(result.stdout.splitlines()[-1])
    assert built["warnings"] == []
    assert (tmp_path / built["wheel"]).is_file()

"""The README's quickstart runs as written."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest


def test_quickstart_runs():
    text = Path("README.md").read_text()
    code = re.search(r"## Quickstart\n\n```python\n(.*?)```", text, re.S).group(1)
    namespace = {}
    exec(compile(code, "README quickstart", "exec"), namespace)  # noqa: S102
    coin = namespace["Coin"]()
    coin.seed(0)
    coin.reset()
    assert coin.step(1).done


REPO = Path(__file__).resolve().parents[1]


def _quickstart() -> str:
    return re.search(r"## Quickstart\n\n```python\n(.*?)```", (REPO / "README.md").read_text(), re.S).group(1)


@pytest.mark.parametrize("context", ["fork", "spawn", "forkserver"])
def test_quickstart_runs_as_a_script_under_every_context(context, tmp_path):
    code = _quickstart()
    default = "SyncSubprocessEnvManager([cartpole] * 4, {})"
    assert default in code
    script = tmp_path / "quickstart.py"
    script.write_text(code.replace(default, f"SyncSubprocessEnvManager([cartpole] * 4, {{'context': {context!r}}})"))
    result = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0 and result.stderr == "", result.stderr[-2000:]


def _table_after(heading: str) -> list[list[str]]:
    text = (REPO / "README.md").read_text()
    lines = text[text.index(heading) :].splitlines()
    start = next(index for index, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows[2:]  # without the header and its rule


def test_the_porting_table_is_the_one_the_code_uses():
    from ding_env.porting import IMPORT_RENAMES

    rows = _table_after("**Porting from DI-engine.**")
    assert {row[0].strip("`"): row[1].strip("`") for row in rows} == IMPORT_RENAMES


def test_every_ding_env_wrapper_key_is_in_the_readme_table():
    from ding_env import DingEnvWrapper

    rows = _table_after("## DingEnvWrapper and the env families")
    documented = {key.strip("` ") for row in rows for key in row[0].split(",")}
    assert set(DingEnvWrapper.config) | {"is_train", "replay_path"} == documented


@pytest.mark.parametrize("section", ["## Training libraries", "## Multi-agent and hybrid-action envs"])
def test_integration_snippets_run(section):
    text = (REPO / "README.md").read_text()
    part = text.split(section, 1)[1].split("\n## ", 1)[0]
    snippets = re.findall(r"```python\n(.*?)```", part, re.S)
    assert snippets
    for index, code in enumerate(snippets):
        exec(compile(code, f"README {section[3:]} snippet {index}", "exec"), {"__name__": "__main__"})  # noqa: S102

"""The code in README.md and docs/ runs as written, and the tables there are the ones the code uses."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
PAGES = [REPO / "README.md", *sorted(DOCS.rglob("*.md"))]
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.S | re.M)


def _python_blocks() -> list:
    return [
        pytest.param(page, index, match.group(1), id=f"{page.relative_to(REPO)}#{index}")
        for page in PAGES
        for index, match in enumerate(PYTHON_BLOCK.finditer(page.read_text()))
    ]


def _block_with(page: Path, text: str) -> str:
    return next(match.group(1) for match in PYTHON_BLOCK.finditer(page.read_text()) if text in match.group(1))


@pytest.mark.parametrize(("page", "index", "code"), _python_blocks())
def test_every_python_block_runs(page, index, code, monkeypatch, tmp_path):
    monkeypatch.chdir(REPO)  # blocks may name files of the repository (configs/...)
    monkeypatch.setenv("SB3_LOGDIR", str(tmp_path))  # SB3's learn() logs there, not in a new /tmp/SB3-<time> folder
    exec(compile(code, f"{page.relative_to(REPO)} python block {index}", "exec"), {"__name__": "__main__"})  # noqa: S102


def test_the_docs_have_python_blocks():
    pages_with_code = {param.values[0].relative_to(REPO).as_posix() for param in _python_blocks()}
    assert {"README.md", "docs/getting-started.md", "docs/writing-an-env.md", "docs/adapters.md"} <= pages_with_code


def test_the_coin_env_of_writing_an_env_is_a_working_env():
    namespace = {}
    code = _block_with(DOCS / "writing-an-env.md", "class Coin(BaseEnv)")
    exec(compile(code, "docs/writing-an-env.md Coin", "exec"), namespace)  # noqa: S102
    coin = namespace["Coin"]()
    coin.seed(0)
    coin.reset()
    assert coin.step(1).done


@pytest.mark.parametrize("page", ["README.md", "docs/getting-started.md"])
@pytest.mark.parametrize("context", ["fork", "spawn", "forkserver"])
def test_the_quickstart_runs_as_a_script_under_every_context(page, context, tmp_path):
    default = "SyncSubprocessEnvManager([cartpole] * 4, {})"
    code = _block_with(REPO / page, default)
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


def test_the_readme_quickstart_is_short():
    code = re.search(r"## Quickstart\n\n```python\n(.*?)```", (REPO / "README.md").read_text(), re.S).group(1)
    assert len(code.splitlines()) <= 15


def _table_after(page: Path, heading: str) -> list[list[str]]:
    text = page.read_text()
    lines = text[text.index(heading) :].splitlines()
    start = next(index for index, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows[2:]  # without the header and its rule


def test_the_run_output_the_cli_page_shows_is_what_the_command_prints():
    # The run is seeded: every line but the throughput is the same on every machine. Off a terminal, stderr has
    # the two lines of what the run will do (no progress bars), stdout the summary.
    text_blocks = re.findall(r"^```text\n(\$ ding-env run .*?)^```$", (DOCS / "cli.md").read_text(), re.S | re.M)
    command, *shown = text_blocks[0].splitlines()
    printed = subprocess.run(
        [sys.executable, "-m", "ding_env", *command.split()[2:]], capture_output=True, text=True, cwd=REPO, check=True
    )
    lines = [
        line for line in (printed.stderr + printed.stdout).splitlines() if not line.startswith("collect throughput")
    ]
    assert lines == [line for line in shown if not line.startswith("collect throughput")]


def test_the_porting_table_is_the_one_the_code_uses():
    from ding_env.porting import IMPORT_RENAMES

    rows = _table_after(DOCS / "porting.md", "# Porting from DI-engine")
    assert {row[0].strip("`"): row[1].strip("`") for row in rows} == IMPORT_RENAMES


def test_every_ding_env_wrapper_key_is_in_the_table():
    from ding_env import DingEnvWrapper

    rows = _table_after(DOCS / "env-families.md", "## DingEnvWrapper")
    documented = {key.strip("` ") for row in rows for key in row[0].split(",")}
    assert set(DingEnvWrapper.config) | {"is_train", "replay_path"} == documented


def test_every_manager_config_key_is_in_the_table():
    from ding_env.env_manager import MANAGER_CONFIG

    rows = _table_after(DOCS / "configs.md", "## Manager keys")
    documented = {key.strip("` ") for row in rows for key in row[0].split(",")}
    assert set(MANAGER_CONFIG) == documented

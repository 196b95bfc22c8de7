"""The README's quickstart runs as written."""

import re
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


@pytest.mark.parametrize("section", ["## Training libraries", "## Multi-agent and hybrid-action envs"])
def test_integration_snippets_run(section):
    text = Path("README.md").read_text()
    part = text.split(section, 1)[1].split("\n## ", 1)[0]
    snippets = re.findall(r"```python\n(.*?)```", part, re.S)
    assert snippets
    for index, code in enumerate(snippets):
        exec(compile(code, f"README {section[3:]} snippet {index}", "exec"), {"__name__": "__main__"})  # noqa: S102

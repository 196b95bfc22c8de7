"""The README's quickstart runs as written."""

import re
from pathlib import Path


def test_quickstart_runs():
    text = Path("README.md").read_text()
    code = re.search(r"## Quickstart\n\n```python\n(.*?)```", text, re.S).group(1)
    namespace = {}
    exec(compile(code, "README quickstart", "exec"), namespace)  # noqa: S102
    coin = namespace["Coin"]()
    coin.seed(0)
    coin.reset()
    assert coin.step(1).done

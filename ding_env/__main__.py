"""``python -m ding_env``: the ``ding-env`` command line."""

import sys

from ding_env.cli import main

sys.exit(main())

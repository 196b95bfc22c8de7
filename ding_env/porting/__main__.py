"""``python -m ding_env.porting SRC --out DST``: the same as ``ding-env port``."""

import sys

from ding_env.porting.command import main

sys.exit(main())

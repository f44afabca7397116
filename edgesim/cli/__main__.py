"""``python -m edgesim.cli``: the ``edgesim`` command."""

import sys

from edgesim.cli import main

sys.exit(main())

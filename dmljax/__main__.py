"""``python -m dmljax``: run every operator, check it on the spot, then benchmark it."""

import sys

from dmljax.bench._cli import main

sys.exit(main())

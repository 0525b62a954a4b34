"""``python -m dmljax``: run every operator, check it on the spot, then benchmark it."""

import sys

try:
    from dmljax.bench._cli import main
except KeyboardInterrupt:  # Ctrl-C while JAX loads: the same one line and status as during the run
    print("python -m dmljax: interrupted (Ctrl-C); the run stopped before its end.", file=sys.stderr)
    sys.exit(130)

sys.exit(main())

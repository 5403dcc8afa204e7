"""``python -m flake8_replayssm`` is ``replayssm-lint``."""

from .cli import main

raise SystemExit(main())

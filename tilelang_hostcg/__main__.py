"""``python -m tilelang_hostcg``: the command line."""

from .cli import main

raise SystemExit(main())

"""``python -m tilelang_hostcg``: the command line."""

from .cli.main import main

raise SystemExit(main())

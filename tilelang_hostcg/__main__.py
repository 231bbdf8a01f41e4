"""``python -m tilelang_hostcg``: the command line. The working directory that ``-m`` puts first on
``sys.path`` is taken off again (as ``python -P`` does): the commands import the compiler as a
program of this environment would, and a ``tilelang`` or ``tvm`` folder where they are run is not it."""

import os
import sys

if sys.path and sys.path[0] in ("", os.curdir, os.getcwd()) and not getattr(sys.flags, "safe_path", False):
    del sys.path[0]

from .cli.main import main  # after the path is what a program's is

raise SystemExit(main())

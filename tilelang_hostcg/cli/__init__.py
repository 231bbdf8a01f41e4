"""The command line, ``tilelang-hostcg`` (also ``python -m tilelang_hostcg``).

It formats what the library returns and owns nothing else; the core never imports it.
"""

from __future__ import annotations

from .main import main

__all__ = ["main"]

"""The command line, ``tilelang-hostcg`` (also ``python -m tilelang_hostcg``): it formats
what the library returns; the core never imports it."""

from __future__ import annotations

from .main import main

__all__ = ["main"]

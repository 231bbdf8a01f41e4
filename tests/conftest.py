"""Shared fixtures: an isolated registry and a folder of importable lazy modules."""

from __future__ import annotations

import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest


class ModuleFolder:
    """Writes uniquely named Python modules into a folder on ``sys.path``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.names: list[str] = []

    def write(self, source: str, *, prefix: str = "hostcg_lazy") -> str:
        """Write ``source`` as a new module; returns its import name."""
        name = f"{prefix}_{uuid.uuid4().hex[:10]}"
        (self.root / f"{name}.py").write_text(textwrap.dedent(source))
        self.names.append(name)
        return name


@pytest.fixture
def modules(tmp_path: Path) -> Iterator[ModuleFolder]:
    """A folder on ``sys.path`` for lazy plugin modules; they are unloaded afterwards."""
    folder = ModuleFolder(tmp_path)
    sys.path.insert(0, str(tmp_path))
    try:
        yield folder
    finally:
        sys.path.remove(str(tmp_path))
        for name in folder.names:
            sys.modules.pop(name, None)

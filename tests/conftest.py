"""Shared fixtures: an isolated registry, a folder of importable lazy modules, the
throwaway plugin environments of the slow tests, and the TileLang environments of the
``tilelang`` tests.

Markers (``--strict-markers``): ``slow`` for a test that builds or installs into a
virtual environment, ``tilelang`` for one that runs a real TileLang. A test that uses
the ``environments`` fixture (directly or through a fixture of its module) is marked
``slow`` here at collection, so the fast loop (``-m "not slow and not tilelang"``)
never builds an environment.
"""

from __future__ import annotations

import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tilelang_hostcg.testing import PluginEnvironment

from .tilelang_env import TileLangEnvs


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


# ------------------------------------------------------------ plugin environments
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark ``slow`` every test whose fixtures build a plugin environment, and check that
    every ``tilelang`` test names its one TileLang environment (an ``xdist_group``
    ``tilelang-VERSION``, see ``tests/tilelang_env.py``).

    Under ``pytest-xdist`` with ``--dist loadgroup`` (as ``.ci/run`` runs it), each test
    file stays in one worker, where its module-scoped environment is built once and its
    tests run in order; the ``tilelang`` tests are grouped by TileLang environment
    instead, as they install into and uninstall from it. Those groups come first, the
    largest first (``.ci/run`` passes ``--no-loadscope-reorder`` to keep this order):
    they are the longest, and the other files fill the other worker around them.
    """
    grouping = config.pluginmanager.hasplugin("xdist")
    for item in items:
        if "environments" in getattr(item, "fixturenames", ()) and not item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.slow)
        groups = [m.args[0] if m.args else m.kwargs.get("name") for m in item.iter_markers("xdist_group")]
        if item.get_closest_marker("tilelang") and (
                len(groups) != 1 or not str(groups[0]).startswith("tilelang-")):
            raise pytest.UsageError(f"{item.nodeid}: a tilelang test needs exactly one xdist_group "
                                    f"'tilelang-VERSION' (tests/tilelang_env.py: group, params), "
                                    f"not {groups}")
        if grouping and not groups:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))
    if grouping:
        sizes: dict[str, int] = {}
        for item in items:
            if item.get_closest_marker("tilelang"):
                name = _group_of(item)
                sizes[name] = sizes.get(name, 0) + 1
        # A stable sort: each group's tests, and the other files, keep their order.
        items.sort(key=lambda item: (-sizes.get(_group_of(item), 0),
                                     _group_of(item) if _group_of(item) in sizes else ""))


def _group_of(item: pytest.Item) -> str:
    marker = item.get_closest_marker("xdist_group")
    return str(marker.args[0]) if marker and marker.args else ""


class Environments:
    """Makes the run's throwaway plugin environments, one folder each under one root.

    Each environment is its own layer over the running interpreter's packages (see
    :class:`~tilelang_hostcg.testing.PluginEnvironment`): what one test module installs
    is never seen by another. Creating the venv itself costs milliseconds; the cost is
    in what is installed and in the processes run there.
    """

    def __init__(self, root: Path) -> None:
        self.root = root

    def new(self, name: str) -> PluginEnvironment:
        """A fresh, empty environment in ``<root>/<name>-<n>/venv``."""
        folder = self.root / f"{name}-{len(list(self.root.glob(f'{name}-*')))}"
        folder.mkdir(parents=True)
        return PluginEnvironment(folder / "venv")


@pytest.fixture(scope="session")
def environments(tmp_path_factory: pytest.TempPathFactory) -> Environments:
    """The factory of throwaway plugin environments (marks its users ``slow``)."""
    return Environments(tmp_path_factory.mktemp("environments"))



@pytest.fixture(scope="session")
def tilelang_envs(tmp_path_factory: pytest.TempPathFactory) -> TileLangEnvs:
    """The TileLang environments, each with the project installed once this session."""
    return TileLangEnvs(tmp_path_factory)

"""Shared fixtures: an isolated registry, a folder of importable lazy modules, and the
throwaway plugin environments of the slow tests.

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
    """Mark ``slow`` every test whose fixtures build a plugin environment.

    Under ``pytest-xdist`` with ``--dist loadgroup`` (as ``.ci/run`` runs it), each test
    file stays in one worker, where its module-scoped environment is built once and its
    tests run in order. (``.ci/run`` runs the ``tilelang`` tests apart, in one process:
    they share the TileLang environments.)
    """
    grouping = config.pluginmanager.hasplugin("xdist")
    for item in items:
        if "environments" in getattr(item, "fixturenames", ()) and not item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.slow)
        if grouping:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))


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



# ------------------------------------------------------------ first-party plugin wheels
@pytest.fixture(scope="session")
def first_party_wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The wheel of each plugin under ``plugins/``, by distribution name: built once per
    run, from copies of the source trees (building writes into the tree), for the tests
    that install them. ``tests/test_plugin_builds.py`` builds them as ``pip`` does."""
    import shutil

    from .plugin_factory import build_source_wheels

    root = tmp_path_factory.mktemp("first-party-wheels")
    plugins = sorted(p for p in (Path(__file__).resolve().parents[1] / "plugins").iterdir()
                     if (p / "pyproject.toml").exists())
    for plugin in plugins:
        shutil.copytree(plugin, root / "src" / plugin.name,
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    wheels = build_source_wheels(root / "wheels", [root / "src" / p.name for p in plugins])
    by_name = {wheel.name.split("-")[0].replace("_", "-"): wheel for wheel in wheels}
    assert sorted(by_name) == [p.name for p in plugins], wheels
    return by_name

"""Shared fixtures: an isolated registry, a folder of importable lazy modules, the
throwaway plugin environments of the slow tests, and the TileLang environments of the
``tilelang`` tests.

Markers (``--strict-markers``): ``slow`` for a test that builds or installs into a
virtual environment, ``tilelang`` for one that runs a real TileLang. A test that uses
the ``environments`` fixture (directly or through a fixture of its module) is marked
``slow`` here at collection, so the fast loop (``-m "not slow and not tilelang"``)
never builds an environment. ``needs_tool(name, ..., why=...)`` marks a test that needs a
program on ``PATH`` (one of the names): without it the test is skipped, saying which, or
fails where ``TILELANG_HOSTCG_TEST_REQUIRE_TOOLS=1`` (``.ci/run`` sets it), so that a CI
run never passes with a test left out for a missing tool. Tests whose outcome is a
nested pytest's (the first-party plugins' own tests) report that run's outcomes in the
terminal summary.
"""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tilelang_hostcg.testing import PluginEnvironment

from .tilelang_env import PLUGINS, TileLangEnvs, session_wheels


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

    def distribution(self, name: str, entry_points: dict[str, dict[str, str]], *,
                     version: str = "1.0", requires: tuple[str, ...] = ()) -> Path:
        """Write the metadata of an installed distribution ``name`` (a ``.dist-info``
        folder, as pip leaves it) into the folder, advertising ``entry_points`` (group ->
        ``{name: value}``) of modules written with :meth:`write`."""
        folder = self.root / f"{name.replace('-', '_')}-{version}.dist-info"
        folder.mkdir()
        (folder / "METADATA").write_text("".join([
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
            *(f"Requires-Dist: {requirement}\n" for requirement in requires)]))
        (folder / "entry_points.txt").write_text("".join(
            f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in items.items())
            for group, items in entry_points.items()))
        return folder


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


# ------------------------------------------------------------ tools a test needs
REQUIRE_TOOLS = "TILELANG_HOSTCG_TEST_REQUIRE_TOOLS"
"""Set to ``1`` (as ``.ci/run`` does), a test whose tool is missing fails instead of skipping."""


def tools_required() -> bool:
    """Whether a missing tool (or a nested test left out) fails the test (``REQUIRE_TOOLS=1``)."""
    return os.environ.get(REQUIRE_TOOLS) == "1"


def skip_or_fail(message: str) -> None:
    """Skip the running test with ``message``, or fail it where :data:`REQUIRE_TOOLS` is set."""
    if tools_required():
        pytest.fail(f"{message} ({REQUIRE_TOOLS}=1: every test must run here; install what is "
                    "missing)", pytrace=False)
    pytest.skip(message)


def need_tool(*names: str, why: str) -> str:
    """The path of the first of ``names`` found on ``PATH``; else the test skips (or fails,
    see :func:`skip_or_fail`) naming the tool and what it is for."""
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    skip_or_fail(f"{' or '.join(names)} not found on PATH ({why})")
    raise AssertionError("unreachable")  # pytest.skip and pytest.fail raise


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Apply each ``needs_tool`` marker before the test's fixtures run."""
    for marker in item.iter_markers("needs_tool"):
        need_tool(*marker.args, why=marker.kwargs.get("why", "the test runs it"))


NESTED = "nested pytest"
"""The ``user_properties`` key under which a test records the outcomes of a nested pytest."""


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """A section listing what each nested pytest ran: counts, and every test it skipped or
    failed, with the reason (under pytest-xdist too: the property travels in the report)."""
    lines = []
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) != "call":
                continue
            for key, value in getattr(report, "user_properties", ()):
                if key == NESTED:
                    counts = ", ".join(f"{n} {outcome}" for outcome, n in sorted(value["counts"].items()))
                    lines.append(f"{report.nodeid}: {counts or 'no tests'}")
                    lines += [f"  {outcome.upper()} {test}: {reason}"
                              for outcome, test, reason in value["not_passed"]]
    if lines:
        terminalreporter.section("nested pytest runs")
        for line in lines:
            terminalreporter.write_line(line)


# ------------------------------------------------------------ plugin environments
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark ``slow`` every test whose fixtures build a plugin environment, and check that
    every ``tilelang`` test names its one TileLang environment (an ``xdist_group``
    ``tilelang-VERSION``: ``params`` of ``tests/tilelang_env.py``)."""
    for item in items:
        if "environments" in getattr(item, "fixturenames", ()) and not item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.slow)
        if item.get_closest_marker("tilelang"):
            groups = [m.args[0] if m.args else m.kwargs.get("name")
                      for m in item.iter_markers("xdist_group")]
            if len(groups) != 1 or not str(groups[0]).startswith("tilelang-"):
                raise pytest.UsageError(
                    f"{item.nodeid}: a tilelang test uses one TileLang environment, named by "
                    f"its xdist_group tilelang-VERSION (tests/tilelang_env.py: params), not by "
                    f"{groups}")


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
    run and shared by the workers of one run (see ``tests/tilelang_env.py``:
    ``session_wheels``), for the tests that install them.
    ``tests/test_plugin_builds.py`` builds them as ``pip`` does."""
    wheels = session_wheels(tmp_path_factory)
    plugins = sorted(p.name for p in (Path(__file__).resolve().parents[1] / "plugins").iterdir()
                     if (p / "pyproject.toml").exists())
    assert plugins == sorted(PLUGINS), (plugins, PLUGINS)
    return {name: wheels[name] for name in plugins}


@pytest.fixture(scope="session")
def tilelang_envs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TileLangEnvs]:
    """The TileLang environments, each with the project installed once this session."""
    envs = TileLangEnvs(tmp_path_factory)
    yield envs
    envs.close()

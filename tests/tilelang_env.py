"""Virtual environments with a real TileLang, for the integration tests.

Each environment is a plain venv (not layered over the test environment): ``torch``
first (a CPU build), then one release of a TileLang build, as a user would install them.
An environment is named by its key: ``0.1.15`` is stock ``tilelang`` 0.1.15,
``paddle-0.1.13`` is PaddlePaddle's build, ``tilelang-paddle`` 0.1.13 (:func:`build_of`).

The base of each (torch + TileLang, nothing of ours) is built once per machine, outside
any checkout, in :func:`envs_root` (``tilelang-KEY``, with a marker file naming what it
holds), under a file lock, so runs that start at once build it once; later runs and
other checkouts reuse it while the marker matches. A run never changes a base: it works
in a hard-linked copy of its own (:class:`TileLangEnv`; seconds, no disk), so two runs at
once never see each other's installs.

A test session builds the project's wheel and the first-party plugins' wheels once
(:func:`session_wheels`, shared by the ``pytest-xdist`` workers of one run) and installs
the project into each TileLang environment once (:class:`TileLangEnvs`), by a plain
``pip install`` of that wheel, dependencies resolved. Every test module of one
environment shares that installation; what a module or test installs beyond it, it
uninstalls. A TileLang test uses one environment only, named by its ``xdist_group``
(:func:`params`): ``--dist loadgroup`` runs each environment's tests in one worker.
"""

from __future__ import annotations

import base64
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import venv
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tilelang_hostcg.testing import PluginEnvironment

from .plugin_factory import build_source_wheels

TORCH = "torch==2.13.0"
ROOT = Path(__file__).resolve().parents[1]
OURS = ("tilelang-hostcg", "tilelang-hostcg-stamp")
PLUGINS = ("tilelang-hostcg-stamp", "tilelang-hostcg-cuda", "tilelang-hostcg-rocm",
           "tilelang-hostcg-template")
"""The first-party plugins (``plugins/``), built into wheels once per session."""

KEYS = ("0.1.15", "0.1.12", "0.1.11", "paddle-0.1.13")
"""Every TileLang environment the tests use (``.ci/run`` builds them before the tests)."""

# TileLang 0.1.11 declares apache-tvm-ffi~=0.1.0, but its TVM aborts at import with
# apache-tvm-ffi 0.1.12 or later: its base pins the release it was built against.
PINS = {"0.1.11": ("apache-tvm-ffi==0.1.11",)}

BUILDS = {"paddle": "tilelang-paddle"}
"""Key prefixes of TileLang's other published builds: prefix -> distribution name."""

MARKER = "tilelang-hostcg-test-env.json"
"""The file in a base naming what it holds (written last: no marker, no base)."""


def build_of(key: str) -> tuple[str, str]:
    """The distribution and version an environment key names: ``0.1.15`` is
    ``("tilelang", "0.1.15")``, ``paddle-0.1.13`` is ``("tilelang-paddle", "0.1.13")``."""
    prefix, dash, version = key.rpartition("-")
    return (BUILDS[prefix] if dash else "tilelang"), version


def params(*versions: str) -> list[Any]:
    """Parameters of a fixture over TileLang ``versions``: each marks its tests with the
    ``xdist_group`` ``tilelang-VERSION`` (one worker runs them all) and names it in
    their ids."""
    return [pytest.param(version, marks=pytest.mark.xdist_group(f"tilelang-{version}"),
                         id=f"tilelang-{version}") for version in versions]


def envs_root() -> Path:
    """Where the bases live: ``$TILELANG_HOSTCG_TEST_ENVS`` when set, else
    ``${XDG_CACHE_HOME:-~/.cache}/tilelang-hostcg/test-envs/pyX.Y`` (X.Y: this Python)."""
    given = os.environ.get("TILELANG_HOSTCG_TEST_ENVS")
    if given:
        return Path(given)
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache, "tilelang-hostcg", "test-envs", "py{}.{}".format(*sys.version_info))


def _wanted(key: str) -> dict[str, Any]:
    """The marker of ``key``'s base: what it holds, this Python's version included."""
    distribution, version = build_of(key)
    wanted: dict[str, Any] = {"torch": TORCH, "tilelang": version,
                              "python": sys.version.split()[0]}
    if distribution != "tilelang":
        wanted["distribution"] = distribution
    if key in PINS:
        wanted["pins"] = list(PINS[key])
    return wanted


def _pip(python: Path, *args: str) -> None:
    proc = subprocess.run([str(python), "-m", "pip", "--disable-pip-version-check", "--no-input",
                           *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"pip {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")


def base_env(key: str, root: Path | None = None) -> Path:
    """The base of ``key``'s environment in ``root`` (default :func:`envs_root`): built
    unless its marker matches (torch, then the TileLang build; minutes), under a lock."""
    root = root or envs_root()
    root.mkdir(parents=True, exist_ok=True)
    folder = root / f"tilelang-{key}"
    marker = folder / MARKER
    wanted = _wanted(key)
    with _locked(root / f"tilelang-{key}.lock"):
        if not marker.exists() or json.loads(marker.read_text()) != wanted:
            venv.EnvBuilder(with_pip=True, clear=True).create(folder)
            python = folder / "bin" / "python"
            _pip(python, "install", "-q", TORCH)  # before tilelang: else pip fetches a CUDA torch
            distribution, version = build_of(key)
            _pip(python, "install", "-q", f"{distribution}=={version}", *PINS.get(key, ()))
            marker.write_text(json.dumps(wanted))
    return folder


class TileLangEnv(PluginEnvironment):
    """A venv with ``torch`` and one release of a TileLang build, at ``path``: a
    hard-linked copy of the base of ``key`` (:func:`base_env`, built where missing) made
    where ``path`` is not a venv yet. ``distribution`` and ``version`` are the TileLang
    build installed. Processes run with the folder as their working directory (not the
    checkout, whose ``tilelang_hostcg`` must not shadow the installed one)."""

    def __init__(self, path: Path, key: str, *, build: bool = True) -> None:
        self.key = key
        self.distribution, self.version = build_of(key)
        self._runs = 0
        if build and not (path / "pyvenv.cfg").exists():
            _link_copy(base_env(key), path)
        super().__init__(path)
        if build and any(self.site_packages.glob("tilelang_hostcg*.dist-info")):
            self.uninstall(*OURS)  # a copy starts without us; relabel()'s copy keeps what it holds

    def environ(self, extra: dict[str, str] | None = None) -> dict[str, str]:  # type: ignore[override]
        """As :meth:`PluginEnvironment.environ`, without TileLang's own variables either."""
        env = {k: v for k, v in super().environ().items() if not k.startswith("TILELANG_")}
        env.update(extra or {})
        return env

    def pip(self, *args: str) -> str:  # type: ignore[override]
        """``pip ARGS`` here; its standard output (raises with pip's output on failure)."""
        return super().pip(*args).stdout

    def freeze(self) -> dict[str, str]:
        """Installed distributions: normalized name -> version."""
        listed = json.loads(self.pip("list", "--format", "json"))
        return {item["name"].lower().replace("_", "-"): item["version"] for item in listed}

    def python_run(self, code: str, *args: str, env: Any = None, cwd: Any = None,
                   timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return super().python_run(code, *args, env=env, cwd=cwd or self.path, timeout=timeout)

    def command(self, *argv: str, env: Any = None, cwd: Any = None,
                timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return super().command(*argv, env=env, cwd=cwd or self.path, timeout=timeout)

    def run(self, code: str, *, env: dict[str, str] | None = None, cwd: Path | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """Run ``code`` in a fresh interpreter, from a file: TileLang's ``T.prim_func``
        reads its function's source."""
        scripts = self.path / "scripts"
        scripts.mkdir(exist_ok=True)
        self._runs += 1
        script = scripts / f"run_{os.getpid()}_{self._runs}.py"
        script.write_text(textwrap.dedent(code))
        return subprocess.run([self.python, str(script)], capture_output=True,
                              text=True, env=self.environ(env), cwd=cwd or self.path,
                              timeout=timeout)

    def run_json(self, code: str, *, env: dict[str, str] | None = None) -> Any:  # type: ignore[override]
        """Run ``code`` (as :meth:`run`), which prints one JSON document last; return it."""
        proc = self.run(code, env=env)
        assert proc.returncode == 0, f"subprocess failed:\n{proc.stdout}\n{proc.stderr}"
        return json.loads(proc.stdout.strip().splitlines()[-1])

    def cli(self, *argv: str) -> subprocess.CompletedProcess[str]:
        """``python -m tilelang_hostcg ARGV`` here."""
        return self.command(*argv)

    def cli_each(self, *argvs: tuple[str, ...]) -> list[subprocess.CompletedProcess[str]]:
        """``python -m tilelang_hostcg ARGV`` for each of ``argvs``, as :meth:`cli` runs
        it, each in a process of its own: forked, one after the other, from an
        interpreter of this environment that has imported ``torch`` and nothing else.

        ``torch`` is TileLang's heaviest import (most of the ~2.5 s a command takes here)
        and nothing of ours looks at it; every other module, TileLang and ours included,
        each command imports afresh, from the start-up hook on, as a new interpreter.
        """
        runs = self.run_json(_CLI_EACH.replace("ARGVS", repr([list(argv) for argv in argvs])))
        return [subprocess.CompletedProcess(["-m", "tilelang_hostcg", *argv], code, out, err)
                for argv, (code, out, err) in zip(argvs, runs, strict=True)]


def _link_copy(base: Path, path: Path) -> None:
    """``path`` as a copy of the venv ``base`` whose files are hard links (``cp -al``): pip
    and Python replace files rather than write into them, so the base never changes."""
    partial = path.with_name(path.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    shutil.copytree(base, partial, symlinks=True, copy_function=os.link,
                    ignore=shutil.ignore_patterns("scripts", "xdg-cache"))
    partial.rename(path)


_CLI_EACH = """
import json, os, runpy, sys, tempfile

import torch  # noqa: F401  (loaded once, for every command)

results, child = [], None
for argv in ARGVS:
    out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        child = argv
        break
    status = os.waitpid(pid, 0)[1]
    out.seek(0)
    err.seek(0)
    results.append([os.waitstatus_to_exitcode(status), out.read().decode(), err.read().decode()])

if child is None:
    print(json.dumps(results))
else:  # as `python -m tilelang_hostcg ARGV`, and the interpreter's own exit after it
    sys.argv = ["-m", *child]
    sys.path[0] = os.getcwd()
    runpy.run_module("tilelang_hostcg", run_name="__main__", alter_sys=True)
"""

def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def relabel(env: TileLangEnv, dest: Path, name: str, version: str, *, editable: bool = False,
            rename: tuple[str, str, str] | list[tuple[str, str, str]] | None = None) -> TileLangEnv:
    """A copy of ``env`` at ``dest`` (hard links: no file of ``env`` is ever written; a file
    changed is written anew) whose TileLang is the distribution ``name`` ``version``, its
    metadata rewritten as an installer writes it: ``METADATA``'s ``Name`` and ``Version``,
    the ``.dist-info`` folder's name, the ``RECORD`` lines of that folder and the hash of
    every file changed. ``editable``: the ``tilelang`` package moved to a source folder and
    installed from it as ``pip install -e`` installs it (a ``.pth`` naming the folder, a PEP
    610 ``direct_url.json``, a ``RECORD`` without the package). ``rename``: ``(file, old,
    new)`` replaces ``old`` by ``new`` in that file of TileLang's (relative to
    ``site-packages``), as a build that renamed an integration point ships it (a list: each,
    in order)."""
    shutil.rmtree(dest, ignore_errors=True)
    if subprocess.run(["cp", "-al", str(env.path), str(dest)], capture_output=True).returncode != 0:
        shutil.copytree(env.path, dest, symlinks=True)  # another file system: a plain copy
    site = next((dest / "lib").glob("python*/site-packages"))
    old = next(site.glob(f"{env.distribution.replace('-', '_')}-{env.version}.dist-info"))
    old = old.rename(old.with_name(old.name + ".old"))  # the new folder's name may be the same
    new = site / f"{name.replace('-', '_')}-{version}.dist-info"
    new.mkdir()
    changed: dict[str, bytes] = {}
    source = dest / "src"
    meta = (old / "METADATA").read_text(encoding="utf-8")
    meta = re.sub(r"(?m)^Name: .*$", f"Name: {name}", meta, count=1)
    changed[f"{new.name}/METADATA"] = re.sub(r"(?m)^Version: .*$", f"Version: {version}", meta, count=1).encode()
    for path, before, after in [rename] if isinstance(rename, tuple) else rename or ():
        text = changed[path].decode() if path in changed else (site / path).read_text(encoding="utf-8")
        assert before in text, (path, before)
        changed[path] = text.replace(before, after).encode()
    record = [line.replace(f"{old.name.removesuffix('.old')}/", f"{new.name}/", 1) for line in
              (old / "RECORD").read_text(encoding="utf-8").splitlines() if line]
    if editable:
        source.mkdir()
        (site / "tilelang").rename(source / "tilelang")
        pth = f"__editable__.{name.replace('-', '_')}-{version}.pth"
        changed[pth] = f"{source}\n".encode()
        changed[f"{new.name}/direct_url.json"] = json.dumps(
            {"url": source.as_uri(), "dir_info": {"editable": True}}).encode()
        record = [line for line in record if not line.startswith("tilelang/")]
    for item in old.iterdir():
        if item.is_file() and item.name not in ("METADATA", "RECORD"):
            os.link(item, new / item.name)
    for path, data in changed.items():
        target = source / path if editable and path.startswith("tilelang/") else site / path
        target.unlink(missing_ok=True)  # a hard link of env's: written anew, never in place
        target.write_bytes(data)
    listed = {line.split(",", 1)[0]: line for line in record}
    for path, data in changed.items():
        if path in listed or not path.startswith("tilelang/"):
            listed[path] = f"{path},{_record_hash(data)},{len(data)}"
    listed[f"{new.name}/RECORD"] = f"{new.name}/RECORD,,"
    (new / "RECORD").write_text("\n".join(listed.values()) + "\n", encoding="utf-8")
    shutil.rmtree(old)
    copy = TileLangEnv(dest, env.key, build=False)
    copy.distribution, copy.version = name, version
    return copy


KERNELS = (Path(__file__).resolve().parent / "tilelang_kernels.py").read_text()
"""Kernels and helpers that scripts run in a TileLang environment start with."""

INTEGRATION_POINTS = KERNELS[KERNELS.index("\ndef integration_points"):]
"""The text of ``integration_points()`` alone, for scripts that must not import TileLang
before they choose to (it imports TileLang's modules only when called)."""

POINTS = 4
"""How many attributes ``integration_points()`` gives."""


# ------------------------------------------------------------- once per test session
@dataclass(frozen=True)
class Wheels:
    """The wheels built for this session: the project's and each first-party plugin's."""

    folder: Path

    def __getitem__(self, distribution: str) -> Path:
        (wheel,) = self.folder.glob(f"**/{distribution.replace('-', '_')}-*.whl")
        return wheel

    @property
    def project(self) -> Path:
        return self["tilelang-hostcg"]


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _build_wheels(folder: Path) -> None:
    """``pip wheel`` the project (isolated, as a user's build) and, meanwhile, the
    first-party plugins from copies of their sources (in one interpreter, with the test
    environment's setuptools: :func:`~tests.plugin_factory.build_source_wheels`)."""
    sources = folder.parent / f"{folder.name}-sources"
    shutil.rmtree(sources, ignore_errors=True)
    for name in PLUGINS:
        shutil.copytree(ROOT / "plugins" / name, sources / name,
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    project = subprocess.Popen([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                                "--disable-pip-version-check", "-w", str(folder), str(ROOT)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        build_source_wheels(folder / "plugins", [sources / name for name in PLUGINS])
    finally:
        output, _ = project.communicate()
    if project.returncode != 0:
        raise RuntimeError(f"{' '.join(project.args)} failed:\n{output}")


def session_wheels(tmp_path_factory: pytest.TempPathFactory) -> Wheels:
    """This session's wheels, built on first use; the workers of one ``pytest-xdist`` run
    share them (the first builds them while the others wait)."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's folder, above each worker's own
    folder = root / "wheels"
    with _locked(root / "wheels.lock"):
        if not (folder / "built").exists():
            shutil.rmtree(folder, ignore_errors=True)
            _build_wheels(folder)
            (folder / "built").touch()
    return Wheels(folder)


@dataclass(frozen=True)
class ProjectInstall:
    """A TileLang environment with the project installed by a plain ``pip install`` of
    its wheel (dependencies resolved), and the installed set before and after."""

    env: TileLangEnv
    before: dict[str, str]
    after: dict[str, str]


class TileLangEnvs:
    """The TileLang environments of this session (copies of the bases, in pytest's
    temporary folder, or beside the bases where that is another file system), the project
    installed in each once, on first use."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        self._factory = tmp_path_factory
        self._folder: Path | None = None
        self._own_folder = False
        self._wheels: Wheels | None = None
        self._installs: dict[str, ProjectInstall] = {}

    @property
    def wheels(self) -> Wheels:
        if self._wheels is None:
            self._wheels = session_wheels(self._factory)
        return self._wheels

    def _copies(self) -> Path:
        if self._folder is None:
            root = envs_root()
            root.mkdir(parents=True, exist_ok=True)
            self._folder = self._factory.mktemp("tilelang-envs")
            if self._folder.stat().st_dev != root.stat().st_dev:  # no hard links across
                self._folder, self._own_folder = Path(tempfile.mkdtemp(prefix="run-", dir=root)), True
        return self._folder

    def __getitem__(self, version: str) -> ProjectInstall:
        if version not in self._installs:
            env = TileLangEnv(self._copies() / f"tilelang-{version}", version)
            before = env.freeze()
            env.pip("install", "-q", str(self.wheels.project))
            self._installs[version] = ProjectInstall(env, before, env.freeze())
        return self._installs[version]

    def restore(self, version: str) -> None:
        """Put the project's wheel back in ``version``'s environment (after a test
        replaced it, by an editable install for one)."""
        self[version].env.pip("install", "-q", "--no-deps", "--force-reinstall",
                              str(self.wheels.project))

    def close(self) -> None:
        """Remove the copies made beside the bases (pytest cleans its own folder)."""
        if self._own_folder and self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)

"""Virtual environments with a real TileLang, for the integration tests.

Each environment is a plain venv (not layered over the test environment): ``torch``
first (a CPU build), then one release of a TileLang build, as a user would install them.
An environment is named by its key: ``0.1.15`` is stock ``tilelang`` 0.1.15,
``paddle-0.1.13`` is PaddlePaddle's build, ``tilelang-paddle`` 0.1.13 (:func:`build_of`). The
base (torch + TileLang) is built once and reused while its marker file is there: in
``$TILELANG_HOSTCG_TEST_ENVS`` when set (CI keeps it in an ignored folder of the
checkout), else in pytest's temporary folder. pip's own cache is left at its default,
so a second CI run downloads nothing.

A test session builds the project's wheel and the first-party plugins' wheels once
(:func:`session_wheels`, shared by the ``pytest-xdist`` workers of one run) and installs
the project into each TileLang environment once (:class:`TileLangEnvs`), by a plain
``pip install`` of that wheel, dependencies resolved. Every test module of one
environment shares that installation; what a module or test installs beyond it, it
uninstalls. A TileLang test uses one environment only, named by its ``xdist_group``
and its id (:func:`params`): ``.ci/run`` runs each environment's tests in one worker.
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
import textwrap
import venv
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .plugin_factory import build_source_wheels

TORCH = "torch==2.13.0"
ROOT = Path(__file__).resolve().parents[1]
OURS = ("tilelang-hostcg", "tilelang-hostcg-stamp")
PLUGINS = ("tilelang-hostcg-stamp", "tilelang-hostcg-cuda", "tilelang-hostcg-rocm",
           "tilelang-hostcg-template")
"""The first-party plugins (``plugins/``), built into wheels once per session."""

# TileLang 0.1.11 declares apache-tvm-ffi~=0.1.0, but its TVM aborts at import with
# apache-tvm-ffi 0.1.12 or later: its base pins the release it was built against.
PINS = {"0.1.11": ("apache-tvm-ffi==0.1.11",)}

BUILDS = {"paddle": "tilelang-paddle"}
"""Key prefixes of TileLang's other published builds: prefix -> distribution name."""


def build_of(key: str) -> tuple[str, str]:
    """The distribution and version an environment key names: ``0.1.15`` is
    ``("tilelang", "0.1.15")``, ``paddle-0.1.13`` is ``("tilelang-paddle", "0.1.13")``."""
    prefix, dash, version = key.rpartition("-")
    return (BUILDS[prefix] if dash else "tilelang"), version


def params(*versions: str) -> list[Any]:
    """Parameters of a fixture over TileLang ``versions``: each marks its tests with the
    ``xdist_group`` ``tilelang-VERSION`` and puts that name in their ids, where the
    scheduler of ``.ci/run``'s workers reads it (see :func:`group_in`)."""
    return [pytest.param(version, marks=pytest.mark.xdist_group(f"tilelang-{version}"),
                         id=f"tilelang-{version}") for version in versions]


_GROUP = re.compile(r"[\[-](tilelang-(?:[a-z]+-)?[0-9][^-\]]*)[-\]]")


def group_in(nodeid: str) -> str | None:
    """The ``tilelang-VERSION`` group a test id names in its parameters, if any."""
    match = _GROUP.search(nodeid[nodeid.find("["):]) if "[" in nodeid else None
    return match[1] if match else None


class TileLangEnv:
    """A venv with ``torch`` and one release of a TileLang build; ``pip``/``run`` helpers.
    ``key`` names the environment (:func:`build_of`); ``distribution`` and ``version`` are
    the TileLang build installed."""

    def __init__(self, path: Path, key: str, *, build: bool = True) -> None:
        self.path = path
        self.key = key
        self.distribution, self.version = build_of(key)
        self._runs = 0
        self.python = str(path / "bin" / "python")
        if not build:  # a copy made by relabel(): what it holds is set there
            return
        marker = path / "tilelang-hostcg-test-env.json"
        pins = PINS.get(key, ())
        wanted: dict[str, Any] = {"torch": TORCH, "tilelang": self.version,
                                  "python": sys.version.split()[0]}
        if self.distribution != "tilelang":
            wanted["distribution"] = self.distribution
        if pins:
            wanted["pins"] = list(pins)
        if not marker.exists() or json.loads(marker.read_text()) != wanted:
            venv.EnvBuilder(with_pip=True, clear=True).create(path)
            self.pip("install", "-q", TORCH)  # before tilelang: else pip fetches a CUDA torch
            self.pip("install", "-q", f"{self.distribution}=={self.version}", *pins)
            marker.write_text(json.dumps(wanted))
        self.pip("uninstall", "-q", "-y", *OURS)  # a reused base starts without us

    @staticmethod
    def base_folder(tmp_path_factory: Any) -> Path:
        """Where the environments live: ``$TILELANG_HOSTCG_TEST_ENVS``, else a temporary
        folder of this test run."""
        root = os.environ.get("TILELANG_HOSTCG_TEST_ENVS")
        return Path(root) if root else Path(tmp_path_factory.mktemp("tilelang-envs"))

    def environ(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("TILELANG_HOSTCG_", "TILELANG_")) and k not in (
                   "PYTHONPATH", "VIRTUAL_ENV")}
        env["VIRTUAL_ENV"] = str(self.path)
        env["XDG_CACHE_HOME"] = str(self.path / "xdg-cache")
        env["PATH"] = f"{self.path / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env.update(extra or {})
        return env

    def pip(self, *args: str) -> str:
        proc = subprocess.run([self.python, "-m", "pip", "--disable-pip-version-check",
                               "--no-input", *args], capture_output=True, text=True,
                              env=self.environ())
        if proc.returncode != 0:
            raise RuntimeError(f"pip {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
        return proc.stdout

    def freeze(self) -> dict[str, str]:
        """Installed distributions: normalized name -> version."""
        listed = json.loads(self.pip("list", "--format", "json"))
        return {item["name"].lower().replace("_", "-"): item["version"] for item in listed}

    def run(self, code: str, *, env: dict[str, str] | None = None, cwd: Path | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """Run ``code`` in a fresh interpreter; ``cwd`` defaults to this env's folder (not
        the checkout, whose ``tilelang_hostcg`` must not shadow the installed one).

        The code runs from a file: TileLang's ``T.prim_func`` reads its function's source.
        """
        scripts = self.path / "scripts"
        scripts.mkdir(exist_ok=True)
        self._runs += 1
        script = scripts / f"run_{os.getpid()}_{self._runs}.py"
        script.write_text(textwrap.dedent(code))
        return subprocess.run([self.python, str(script)], capture_output=True,
                              text=True, env=self.environ(env), cwd=cwd or self.path,
                              timeout=timeout)

    def run_json(self, code: str, *, env: dict[str, str] | None = None) -> Any:
        """Run ``code``, which prints one JSON document last, and return it."""
        proc = self.run(code, env=env)
        assert proc.returncode == 0, f"subprocess failed:\n{proc.stdout}\n{proc.stderr}"
        return json.loads(proc.stdout.strip().splitlines()[-1])

    def cli(self, *argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([self.python, "-m", "tilelang_hostcg", *argv], capture_output=True,
                              text=True, env=self.environ(), cwd=self.path, timeout=300)

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
            rename: tuple[str, str, str] | None = None) -> TileLangEnv:
    """A copy of ``env`` at ``dest`` (hard links: no file of ``env`` is ever written; a file
    changed is written anew) whose TileLang is the distribution ``name`` ``version``, its
    metadata rewritten as an installer writes it: ``METADATA``'s ``Name`` and ``Version``,
    the ``.dist-info`` folder's name, the ``RECORD`` lines of that folder and the hash of
    every file changed. ``editable``: the ``tilelang`` package moved to a source folder and
    installed from it as ``pip install -e`` installs it (a ``.pth`` naming the folder, a PEP
    610 ``direct_url.json``, a ``RECORD`` without the package). ``rename``: ``(file, old,
    new)`` replaces ``old`` by ``new`` in that file of TileLang's (relative to
    ``site-packages``), as a build that renamed an integration point ships it."""
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
    if rename is not None:
        path, before, after = rename
        text = (site / path).read_text(encoding="utf-8")
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
    """The TileLang environments of this session, the project installed in each once, on
    first use."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        self._factory = tmp_path_factory
        self._base: Path | None = None
        self._wheels: Wheels | None = None
        self._installs: dict[str, ProjectInstall] = {}

    @property
    def wheels(self) -> Wheels:
        if self._wheels is None:
            self._wheels = session_wheels(self._factory)
        return self._wheels

    def __getitem__(self, version: str) -> ProjectInstall:
        if version not in self._installs:
            if self._base is None:
                self._base = TileLangEnv.base_folder(self._factory)
            env = TileLangEnv(self._base / f"tilelang-{version}", version)
            before = env.freeze()
            env.pip("install", "-q", str(self.wheels.project))
            self._installs[version] = ProjectInstall(env, before, env.freeze())
        return self._installs[version]

    def restore(self, version: str) -> None:
        """Put the project's wheel back in ``version``'s environment (after a test
        replaced it, by an editable install for one)."""
        self[version].env.pip("install", "-q", "--no-deps", "--force-reinstall",
                              str(self.wheels.project))

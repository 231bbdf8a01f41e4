"""Real plugin distributions for the integration, fault and stress tests.

Every module written here starts with a prelude that appends ``import:<module>`` to
the file named by ``$HOSTCG_TEST_MARKERS`` when the module is imported (and hooks
made with ``_hook`` append ``apply:<name>`` when they run), so a test can prove
exactly which plugin code ran in a subprocess.

:func:`install` builds all wheels in one interpreter and installs them with one
``pip`` call, which is several times faster than letting ``pip`` build each source
tree in its own process.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tilelang_hostcg.testing import PluginEnvironment, write_distribution

__all__ = [
    "CODEGEN_GROUP",
    "HOOK_GROUP",
    "MARKERS_ENV",
    "Plugin",
    "build_source_wheels",
    "build_wheels",
    "codegen_module",
    "install",
    "install_sources",
    "module",
    "read_markers",
    "run",
]

CODEGEN_GROUP = "tilelang.host_codegen"
HOOK_GROUP = "tilelang.host_codegen_hooks"
MARKERS_ENV = "HOSTCG_TEST_MARKERS"

_PRELUDE = '''\
import os as _os

import tilelang_hostcg as hc


def _mark(tag):
    path = _os.environ.get("HOSTCG_TEST_MARKERS")
    if path:
        with open(path, "a", encoding="utf-8") as stream:
            stream.write(tag + "\\n")


def _codegen(name, priority=0):
    return hc.HostCodegen(name, lambda mod, target: mod, priority=priority)


def _hook(name, priority=0):
    def apply(mod, target_host, target):
        _mark("apply:" + name)
        return mod

    return hc.HostCodegenHook(name, apply, priority=priority)


_mark("import:" + __name__)
'''


def module(body: str = "") -> str:
    """Source of a plugin module: the marker prelude, then ``body`` (dedented)."""
    return _PRELUDE + textwrap.dedent(body)


def codegen_module(kind: str, name: str, priority: int = 0) -> str:
    """A module-form plugin: registers one codegen for ``kind`` when imported."""
    return module(f"hc.register_host_codegen({kind!r}, _codegen({name!r}, {priority}))\n")


@dataclass(frozen=True)
class Plugin:
    """One distribution: its entry points by group and its files."""

    dist: str
    version: str = "1.0"
    codegens: Mapping[str, str] = field(default_factory=dict)
    hooks: Mapping[str, str] = field(default_factory=dict)
    files: Mapping[str, str] = field(default_factory=dict)
    requires: Sequence[str] = ("tilelang-hostcg",)  # a plugin declares the core it needs

    def write(self, root: Path) -> Path:
        """Write the source tree under ``root``; returns its folder."""
        entry_points = {}
        if self.codegens:
            entry_points[CODEGEN_GROUP] = dict(self.codegens)
        if self.hooks:
            entry_points[HOOK_GROUP] = dict(self.hooks)
        return write_distribution(root, self.dist, self.version, entry_points=entry_points,
                                  files=self.files, requires=self.requires)


_BUILD_WHEELS = """\
import contextlib, importlib, io, os, sys
try:
    import tomllib
except ImportError:
    import tomli as tomllib
out = sys.argv[1]
for folder in sys.argv[2:]:
    os.chdir(folder)
    with open("pyproject.toml", "rb") as stream:
        backend = tomllib.load(stream)["build-system"]["build-backend"]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        importlib.import_module(backend).build_wheel(out)
"""


def build_wheels(root: Path, plugins: Iterable[Plugin]) -> list[Path]:
    """Write ``plugins`` under ``root/src`` and build their wheels in one interpreter
    (into a fresh folder under ``root``); returns the wheels."""
    folders = [plugin.write(root / "src") for plugin in plugins]
    wheels_dir = root / f"wheels-{len(list(root.glob('wheels-*')))}"
    return build_source_wheels(wheels_dir, folders)


def build_source_wheels(wheels_dir: Path, folders: Sequence[Path]) -> list[Path]:
    """Build the wheels of the source trees ``folders`` into the new folder ``wheels_dir``,
    all in one interpreter, each with the build backend its ``pyproject.toml`` names
    (setuptools or hatchling, from the running environment); returns the wheels, sorted.

    Setuptools trees get setuptools' ``build/`` and ``*.egg-info`` folders, as with
    ``pip``; hatchling trees (the first-party plugins) get nothing."""
    wheels_dir.mkdir(parents=True)
    proc = subprocess.run([sys.executable, "-c", _BUILD_WHEELS, str(wheels_dir),
                           *map(str, folders)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"building wheels failed:\n{proc.stdout}\n{proc.stderr}")
    wheels = sorted(wheels_dir.iterdir())
    assert len(wheels) == len(folders), wheels
    return wheels


def install(env: PluginEnvironment, root: Path, plugins: Iterable[Plugin],
            *pip_args: str) -> list[Path]:
    """Build ``plugins`` (see :func:`build_wheels`) and ``pip install`` them into ``env``
    in one call (extra ``pip_args``, e.g. ``--target DIR``). Returns the wheels."""
    wheels = build_wheels(root, plugins)
    env.pip("install", "-q", "--no-deps", "--no-index", *pip_args, *map(str, wheels))
    return wheels


def install_sources(env: PluginEnvironment, wheels_dir: Path, folders: Sequence[Path],
                    *pip_args: str) -> list[Path]:
    """Build the wheels of the source trees ``folders`` into ``wheels_dir`` (see
    :func:`build_source_wheels`) and ``pip install`` them into ``env`` in one call: what
    ``env.install(*folders)`` installs, without a build process per tree."""
    wheels = build_source_wheels(wheels_dir, folders)
    env.pip("install", "-q", "--no-deps", "--no-index", *pip_args, *map(str, wheels))
    return wheels


# Helpers available to every script given to run(); they import TVM only when a
# target is made, so a script can check that listing imports no TVM.
_SCRIPT_PRELUDE = '''\
import json, os, sys, threading, warnings
import tilelang_hostcg as hc

out = {}
GROUPS = ("tilelang.host_codegen", "tilelang.host_codegen_hooks")


def markers():
    try:
        with open(os.environ["HOSTCG_TEST_MARKERS"], encoding="utf-8") as stream:
            return stream.read().split()
    except FileNotFoundError:
        return []


def plugin_modules(prefix="hcgt_"):
    return sorted(name for name in sys.modules if name.startswith(prefix))


def target(kind):
    from tvm.target import Target
    return Target(kind)


def describe(exc):
    if exc is None:
        return None
    try:
        message = str(exc)
    except Exception as err:
        message = f"<str() raised {type(err).__name__}>"
    return {"type": type(exc).__name__, "message": message, "cause": describe(exc.__cause__),
            "mro": [c.__name__ for c in type(exc).__mro__]}


def attempt(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = {"ok": True, "value": fn()}
        except Exception as exc:
            result = {"ok": False, "error": describe(exc)}
    result["warnings"] = [[w.category.__name__, str(w.message)] for w in caught]
    return result


def resolve(kind, registry=None):
    registry = registry or hc.default_registry()
    return registry.resolve_host_codegen(target(kind)).name


def hooks(kind, registry=None):
    registry = registry or hc.default_registry()
    return [reg.name for reg in registry.matching_hooks(target(kind))]


def apply_hooks(kind, registry=None):
    import tvm
    registry = registry or hc.default_registry()
    start = len(markers())
    registry.apply_host_codegen_hooks(tvm.IRModule({}), target("llvm"), target(kind))
    return [tag[len("apply:"):] for tag in markers()[start:] if tag.startswith("apply:")]


def snapshot(registry=None):
    registry = registry or hc.default_registry()
    return sorted([group, reg.kind, reg.name, reg.priority, reg.origin.distribution,
                   reg.origin.version, reg.origin.entry_point]
                  for group in GROUPS for reg in registry.registrations(group))


def sources(registry=None):
    registry = registry or hc.default_registry()
    return [{"group": s.group, "kind": s.kind, "value": s.value, "state": s.state,
             "distribution": s.origin.distribution, "version": s.origin.version,
             "entry_point": s.origin.entry_point, "reason": s.reason,
             "error": describe(s.error)} for s in registry.sources()]


def isolated(*dists, prefer=None):
    """A registry discovering only ``dists`` (and the core)."""
    controls = hc.Controls(only=frozenset(dists), prefer=dict(prefer or {}))
    return hc.Registry(discover=True, controls=controls)


def loaded_snapshot(registry):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        registry.load_all()
    return snapshot(registry)

'''


def run(env: PluginEnvironment, body: str, markers: Path,
        extra_env: Mapping[str, str] | None = None, timeout: float = 120) -> dict[str, Any]:
    """Run ``body`` in a fresh interpreter of ``env`` after the helper prelude; the
    script fills the dict ``out``, which is returned. ``markers`` is the marker file."""
    code = _SCRIPT_PRELUDE + textwrap.dedent(body) + "\nprint(json.dumps(out))\n"
    environ = {MARKERS_ENV: str(markers), **(extra_env or {})}
    proc = env.python_run(code, env=environ, timeout=timeout)
    if proc.returncode != 0:
        raise AssertionError(f"subprocess failed ({proc.returncode}):\n{proc.stdout}\n"
                             f"{proc.stderr}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def read_markers(path: Path) -> list[str]:
    """The tags written to the marker file (empty when no plugin code ran)."""
    return path.read_text(encoding="utf-8").split() if path.exists() else []


def tvm_backend_env(env: PluginEnvironment, root: Path, stamp_wheel: Path, distribution: str,
                    module_name: str, source: str) -> PluginEnvironment:
    """``env`` with the stamp plugin and another ``tvm.backends`` package, ``distribution``, whose
    ``module_name`` (``source``) TVM's autoload runs (installed in the layer, it is found before the
    core's entry point)."""
    folder = write_distribution(root / "src", distribution, entry_points={
        "tvm.backends": {module_name.rpartition("_")[2]: f"{module_name}:_autoload"}},
        files={f"{module_name}.py": source})
    wheels = build_source_wheels(root / "wheels", [folder])
    env.pip("install", "-q", "--no-deps", "--no-index", str(wheels[0]), str(stamp_wheel))
    return env

"""Test helpers for plugin authors, also a pytest plugin (``pytest11``; ``docs/authoring.md``):
the fixtures ``hostcg_registry`` (a fresh, empty :class:`~tilelang_hostcg.Registry`) and
``plugin_environment`` (a session-wide :class:`PluginEnvironment`), :func:`write_distribution`
and :func:`check_plugin`. Importing it imports no TVM."""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .registry import Registry

__all__ = ["PluginEnvironment", "check_plugin", "hostcg_registry", "plugin_environment", "write_distribution"]


def write_distribution(root: str | os.PathLike[str], name: str, version: str = "1.0", *,
                       entry_points: Mapping[str, Mapping[str, str]] | None = None,
                       files: Mapping[str, str] | None = None,
                       requires: Sequence[str] = ()) -> Path:
    """Write a pip-installable source tree under ``root/name-version`` and return it.
    ``entry_points`` maps a group to ``{name: value}``; ``files`` paths to (dedented) text."""
    folder = Path(root) / f"{name}-{version}"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    lines = ['[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n',
             f"[project]\nname = {json.dumps(name)}\nversion = {json.dumps(version)}",
             f"dependencies = {json.dumps(list(requires))}\n"]
    for group, items in (entry_points or {}).items():
        lines.append(f"[project.entry-points.{json.dumps(group)}]")
        lines.extend(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in items.items())
        lines.append("")
    top_level = sorted({Path(path).parts[0] for path in (files or {})
                        if len(Path(path).parts) > 1 or path.endswith(".py")})
    packages = [p for p in top_level if not p.endswith(".py")]
    modules = [p[:-3] for p in top_level if p.endswith(".py")]
    lines += ["[tool.setuptools]", f"packages = {json.dumps(packages)}"]
    if modules:
        lines.append(f"py-modules = {json.dumps(modules)}")
    (folder / "pyproject.toml").write_text("\n".join(lines) + "\n")
    for path, text in (files or {}).items():
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text))
    return folder


def _builds_here(source: Path) -> bool:
    """Whether the running environment meets the build requirements of the source tree
    ``source`` (a wheel needs none), markers evaluated, pre-releases accepted."""
    if not (source / "pyproject.toml").is_file():
        return True
    try:
        import tomllib
    except ImportError:  # Python 3.10: tomli, where installed
        try:
            import tomli as tomllib
        except ImportError:
            return False
    from importlib import metadata

    from packaging.requirements import InvalidRequirement, Requirement
    with open(source / "pyproject.toml", "rb") as stream:
        build_system = tomllib.load(stream).get("build-system", {})
    for text in build_system.get("requires", ["setuptools>=40.8.0"]):
        try:
            requirement = Requirement(text)
            if requirement.marker is not None and not requirement.marker.evaluate():
                continue
            version = metadata.version(requirement.name)
        except (InvalidRequirement, metadata.PackageNotFoundError):
            return False
        if not requirement.specifier.contains(version, prereleases=True):
            return False
    return True


class PluginEnvironment:
    """A throwaway virtual environment layered over the running interpreter's packages: its
    ``site-packages`` comes first, then the running one's (a ``.pth`` file), so what is
    installed here shadows or adds, and ``pip uninstall`` touches only this layer. A
    virtual environment already at ``path`` is used as it is."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        import venv
        self.path = Path(path)
        new = not (self.path / "pyvenv.cfg").exists()
        if new:
            venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt").create(self.path)
        bindir = "Scripts" if os.name == "nt" else "bin"
        self.python = str(self.path / bindir / ("python.exe" if os.name == "nt" else "python"))
        self.bindir = self.path / bindir
        out = subprocess.run([self.python, "-c", "import site; print(site.getsitepackages()[0])"],
                             check=True, capture_output=True, text=True)
        self.site_packages = Path(out.stdout.strip())
        if new:
            parents = [p for p in [*site.getsitepackages(), site.getusersitepackages()]
                       if os.path.isdir(p)]
            (self.site_packages / "_hostcg_parent_site.pth").write_text(
                "import site; " + "; ".join(f"site.addsitedir({p!r})" for p in parents) + "\n")

    def pip(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run ``pip`` in this environment; raises with pip's output on failure."""
        cmd = [self.python, "-m", "pip", "--disable-pip-version-check", "--no-input", *args]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=self.environ())
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}\n"
                               f"{proc.stderr}")
        return proc

    def install(self, *sources: str | os.PathLike[str]) -> None:
        """``pip install`` source trees or wheels, without dependencies. A tree whose build
        requirements the running environment meets builds with them, without build isolation
        or the index (fast, offline); any other builds as ``pip install`` builds it, in an
        isolated build environment from pip's configured index."""
        here = [str(s) for s in sources if _builds_here(Path(s))]
        isolated = [str(s) for s in sources if not _builds_here(Path(s))]
        if here:
            self.pip("install", "-q", "--no-deps", "--no-build-isolation", "--no-index", *here)
        if isolated:
            self.pip("install", "-q", "--no-deps", *isolated)

    def uninstall(self, *names: str) -> None:
        """``pip uninstall -y`` distributions from this environment."""
        self.pip("uninstall", "-q", "-y", *names)

    def environ(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment for processes run here: no inherited controls."""
        from .discovery import PREFIX

        env = {k: v for k, v in os.environ.items()
               if not k.startswith(PREFIX) and k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env["VIRTUAL_ENV"] = str(self.path)
        env["PATH"] = f"{self.bindir}{os.pathsep}{env.get('PATH', '')}"
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.update(extra or {})
        return env

    def python_run(self, code: str, *args: str, env: Mapping[str, str] | None = None,
                   cwd: str | os.PathLike[str] | None = None, timeout: float = 300,
                   ) -> subprocess.CompletedProcess[str]:
        """Run ``code`` in a fresh interpreter of this environment; returns the process."""
        return subprocess.run([self.python, "-c", textwrap.dedent(code), *args],
                              capture_output=True, text=True, env=self.environ(env),
                              cwd=cwd, timeout=timeout)

    def run_json(self, code: str, *, env: Mapping[str, str] | None = None) -> Any:
        """Run ``code`` (which prints one JSON document last) and return that document."""
        proc = self.python_run(code, env=env)
        if proc.returncode != 0:
            raise AssertionError(f"subprocess failed ({proc.returncode}):\n{proc.stdout}\n"
                                 f"{proc.stderr}")
        return json.loads(proc.stdout.strip().splitlines()[-1])

    def command(self, *argv: str, env: Mapping[str, str] | None = None,
                cwd: str | os.PathLike[str] | None = None, timeout: float = 300,
                ) -> subprocess.CompletedProcess[str]:
        """Run ``python -m tilelang_hostcg ARGV`` here; returns the process. ``python -m`` puts
        ``cwd`` first on ``sys.path``: run elsewhere when a source checkout must not count."""
        return subprocess.run([self.python, "-m", "tilelang_hostcg", *argv], capture_output=True,
                              text=True, env=self.environ(env), cwd=cwd, timeout=timeout)


def check_plugin(distribution: str, registry: Registry | None = None) -> list[str]:
    """Assert that ``distribution``'s entry points honour the contract; return its kinds, sorted.

    Metadata is read afresh. Every entry point must be compatible, load into a registry
    of its own (controls ignored), register the right type for its kind and warn
    nothing; each codegen's kind must be a host kind of the installed TVM, each hook's a
    TVM kind, and a ``global_func_host_codegen``'s function must exist. ``registry``: a
    discovering registry to check instead (it must know the distribution's entry
    points). Raises ``AssertionError`` listing every problem.
    """
    __tracebackhide__ = True  # pytest: a failure shows the caller's line and the message
    import importlib

    from . import __version__
    from .core import CODEGEN_GROUP, HOOK_GROUP, PluginWarning, SourceState, normalize_name
    from .discovery import Controls, discover, plan_sources
    from .environment import DEVICE_KIND, UNKNOWN_KIND, import_tvm, kind_misfit
    from .registry import Registry, cannot_build_text, capture, missing_build
    importlib.invalidate_caches()
    wanted = normalize_name(distribution)
    entries = [ep for ep in discover(Controls()).entry_points
               if normalize_name(ep.distribution) == wanted]
    if not entries:
        raise AssertionError(f"distribution {distribution!r} advertises no entry point in "
                             "'tilelang.host_codegen' or 'tilelang.host_codegen_hooks'; is it "
                             "installed, and are its entry points declared in pyproject.toml?")
    if registry is None:
        planned = [p for p in plan_sources(entries, Controls(), __version__)
                   if normalize_name(p.entry.distribution) == wanted]
        registry = Registry(discover=True, controls=Controls(),
                            index_loader=lambda _controls: planned)

    def ours(dist: str | None) -> bool:
        return dist is not None and normalize_name(dist) == wanted

    problems: list[str] = []
    kinds: list[str] = []
    import_tvm()  # before any plugin's import: TileLang's TVM is importable only after tilelang
    caught: list[PluginWarning] = []
    with capture(caught):
        registry.load_all()
        infos = [info for info in registry.sources() if ours(info.origin.distribution)]
        if not infos:
            problems.append("the registry given knows none of its entry points; pass a "
                            "Registry(discover=True), or no registry")
        for info in infos:
            kinds.append(info.kind)
            if info.state != SourceState.LOADED:
                detail = info.reason or (f"{type(info.error).__name__}: {info.error}"
                                         if info.error else info.state)
                problems.append(f"entry point '{info.origin.entry_point}' is {info.state}: "
                                f"{detail}")
        known = set(import_tvm().target.Target.list_kinds())
        for group, what in ((CODEGEN_GROUP, "codegen"), (HOOK_GROUP, "hook")):
            for reg in (r for r in registry.registrations(group) if ours(r.origin.distribution)):
                misfit = kind_misfit(reg.kind, known, host_codegen=group == CODEGEN_GROUP)
                if misfit == UNKNOWN_KIND:
                    problems.append(f"{what} {reg.name!r} is registered for kind {reg.kind!r}, "
                                    "which is not a target kind of the installed TVM")
                elif misfit == DEVICE_KIND:
                    problems.append(f"codegen {reg.name!r} is registered for {reg.kind!r}, a "
                                    "device kind; host codegens belong to host kinds (device "
                                    "type CPU), e.g. 'cuda_host'")
                missing = missing_build(reg.obj) if group == CODEGEN_GROUP else None
                if missing is not None:
                    problems.append(f"codegen {reg.name!r} {cannot_build_text(missing)}")
    problems += [f"warning: {warning}" for warning in caught]
    if problems:
        raise AssertionError(f"plugin distribution {distribution!r} breaks the contract:\n  - "
                             + "\n  - ".join(problems))
    return sorted(set(kinds))


try:
    import pytest
except ImportError:  # usable as a plain module without pytest
    pass
else:

    @pytest.fixture
    def hostcg_registry() -> Registry:
        """A fresh registry reading no entry points; TVM is imported first, as the library
        imports it, so the test and its plugins can ``import tvm``."""
        from .environment import import_tvm
        from .registry import Registry
        import_tvm()
        return Registry()

    @pytest.fixture(scope="session")
    def plugin_environment(tmp_path_factory: pytest.TempPathFactory,
                           ) -> Iterator[PluginEnvironment]:
        """A session-wide throwaway environment to ``install()`` plugin distributions into."""
        yield PluginEnvironment(tmp_path_factory.mktemp("hostcg-env") / "venv")

"""Benchmark helpers: synthetic installed environments and the fresh-process probes.

A synthetic environment is a folder of ``*.dist-info`` folders written directly (no
``pip``), put on ``sys.path`` through ``PYTHONPATH``. Most distributions are filler
(some with ``console_scripts``); a few advertise our groups, three of them for the
benchmark kind, each with a real module whose codegen has its own priority.
"""

from __future__ import annotations

import compileall
import json
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["BENCH_KIND", "BENCH_MODULES", "GROUP", "PROBE", "make_empty_package",
           "make_many_kinds_site", "make_site", "run_probe"]

GROUP = "tilelang.host_codegen"
HOOK_GROUP = "tilelang.host_codegen_hooks"
BENCH_KIND = "test"  # a CPU kind of TVM that the core does not serve
_PLUGINS = (  # (distribution, group, kind, module, priority)
    ("bench-plugin-a", GROUP, BENCH_KIND, "bench_plugin_a", 0),
    ("bench-plugin-b", GROUP, BENCH_KIND, "bench_plugin_b", 1),
    ("bench-plugin-c", GROUP, BENCH_KIND, "bench_plugin_c", 2),
    ("bench-plugin-d", GROUP, "bench_other", "bench_plugin_d", 0),
    ("bench-plugin-e", HOOK_GROUP, "bench_device", "bench_plugin_e", 0),
)
BENCH_MODULES = tuple(module for _d, group, kind, module, _p in _PLUGINS
                      if group == GROUP and kind == BENCH_KIND)
"""The modules of the benchmark kind's plugins."""
_PLUGIN_MODULE = '''\
from tilelang_hostcg import {cls}


def _build(*args):
    raise NotImplementedError("benchmark plugin")


OBJ = {cls}({name!r}, _build, priority={priority})
'''


def _dist_info(site: Path, name: str, version: str, requires: tuple[str, ...] = (),
               entry_points: str = "") -> None:
    folder = site / f"{name.replace('-', '_')}-{version}.dist-info"
    folder.mkdir()
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}",
             f"Summary: synthetic distribution {name}"]
    lines += [f"Requires-Dist: {req}" for req in requires]
    (folder / "METADATA").write_text("\n".join(lines) + "\n")
    if entry_points:
        (folder / "entry_points.txt").write_text(entry_points)


def make_site(root: Path, count: int) -> Path:
    """Write ``count`` installed distributions (plugins included) into ``root/site-COUNT``."""
    site = root / f"site-{count}"
    site.mkdir(parents=True)
    for dist, group, kind, module, priority in _PLUGINS:
        cls = "HostCodegen" if group == GROUP else "HostCodegenHook"
        (site / f"{module}.py").write_text(
            _PLUGIN_MODULE.format(cls=cls, name=dist, priority=priority))
        _dist_info(site, dist, "1.0", ("tilelang-hostcg>=0.1", "apache-tvm>=0.27"),
                   f"[{group}]\n{kind} = {module}:OBJ\n")
    for i in range(count - len(_PLUGINS)):
        eps = (f"[console_scripts]\nsynth-{i} = synthdist_{i}.cli:main\n" if i % 3 == 0
               else "")
        _dist_info(site, f"synthdist-{i:05d}", f"1.{i % 7}", ("numpy>=1.20",), eps)
    compileall.compile_dir(site, quiet=1)  # bytecode next to the sources, as pip writes it
    return site


def make_empty_package(root: Path, count: int) -> Path:
    """A package ``bench_empty`` of ``count`` empty modules (compiled), in ``root/empty``:
    what importing a module costs here before any of its code runs."""
    site = root / "empty"
    package = site / "bench_empty"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    for i in range(count):
        (package / f"m{i}.py").write_text("")
    compileall.compile_dir(site, quiet=1)
    return site


_MANY_KINDS_MODULE = '''\
from tilelang_hostcg import HostCodegen


def _build(*args):
    raise NotImplementedError("benchmark plugin")


CODEGEN = HostCodegen("bench-many", _build)
'''


def make_many_kinds_site(root: Path, kinds: int) -> Path:
    """One distribution advertising ``kinds`` host kinds, each ``module:attr`` of one
    module, written into ``root/many-KINDS``."""
    site = root / f"many-{kinds}"
    site.mkdir(parents=True)
    (site / "bench_many.py").write_text(_MANY_KINDS_MODULE)
    compileall.compile_dir(site, quiet=1)
    lines = [f"[{GROUP}]", *(f"many_{i:05d} = bench_many:CODEGEN" for i in range(kinds))]
    _dist_info(site, "bench-many", "1.0", ("tilelang-hostcg>=0.1",), "\n".join(lines) + "\n")
    return site


# Runs in a fresh interpreter: argv = [mode, kind, with_tvm, extra]; prints one JSON
# document of phase times in ms. With with_tvm == "tvm", TVM is imported (and the
# targets made) before the clock starts, as in a compiler driver; the modes that
# resolve need it. Only the public API is used: the probe measures what a user's
# process does.
PROBE = r'''
import sys, time
mode, kind, with_tvm, extra = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
group = "tilelang.host_codegen"
clock = time.perf_counter
cpu = time.process_time
if with_tvm == "tvm":
    import tvm
    from tvm.target import Target
    llvm, bench_target = Target("llvm"), Target(kind)
t0, c0 = clock(), cpu()
if mode in ("hostcg", "byhand"):
    import tilelang_hostcg
    registry = tilelang_hostcg.default_registry()
    t1 = clock()
    registry.sources()
    t2 = clock()
    if mode == "byhand":  # import the kind's plugin modules without the loader
        import importlib
        modules = [importlib.import_module(name) for name in extra.split(",")]
        t3 = clock()
        loaded = len(modules)
    else:
        chosen = tilelang_hostcg.resolve_host_codegen(bench_target)
        t3 = clock()
        loaded = sum(1 for s in registry.sources() if s.kind == kind and s.state == "loaded")
        import dataclasses  # records the first use made beyond the naive loader's (_types')
        records = sum(1 for name, module in list(sys.modules.items())
                      if name.startswith("tilelang_hostcg") and name != "tilelang_hostcg.core._types"
                      for obj in vars(module).values()
                      if isinstance(obj, type) and dataclasses.is_dataclass(obj)
                      and obj.__module__ == name)
elif mode == "modules":  # import our modules of the first use (extra), then resolve llvm
    import importlib
    import tilelang_hostcg
    for name in extra.split(","):
        importlib.import_module(name)
    t1 = t2 = clock()
    tilelang_hostcg.resolve_host_codegen(llvm)
    t3 = clock()
    loaded = 0
elif mode == "llvm":  # import the package and resolve Target("llvm"): the whole first use
    import tilelang_hostcg
    t1 = t2 = clock()
    tilelang_hostcg.resolve_host_codegen(llvm)
    t3 = clock()
    loaded = sorted(m for m in sys.modules if m.startswith("tilelang_hostcg"))
elif mode == "naive":
    import importlib.metadata
    t1 = clock()
    eps = importlib.metadata.entry_points(group=group)
    t2 = clock()
    objs = [ep.load() for ep in eps if ep.name == kind]
    t3 = clock()
    loaded = len(objs)
elif mode == "stevedore":
    from stevedore import NamedExtensionManager, _cache
    t1 = clock()
    _cache.get_group_all(group)
    t2 = clock()
    mgr = NamedExtensionManager(group, names=[kind], invoke_on_load=False)
    t3 = clock()
    loaded = len(mgr.extensions)
elif mode == "floor-first":  # what a first use under the contract pays: see bench.py 1b
    import importlib, importlib.metadata
    count, _, names = extra.partition(":")
    import packaging.requirements  # requirement verdicts go through packaging
    from dataclasses import dataclass
    for _ in range(int(count)):  # the records beyond the naive loader's: dataclasses
        @dataclass(frozen=True, slots=True)
        class Record:
            """A frozen, slotted dataclass."""
            group: str
            name: str
            value: str
            distribution: str
    t1 = clock()
    for dist in importlib.metadata.distributions():  # every entry_points.txt, public API
        dist.read_text("entry_points.txt")
    t2 = clock()
    objs = [importlib.import_module(name).OBJ for name in names.split(",")]
    t3 = clock()
    loaded = len(objs)
elif mode == "floor":  # what any first use pays here, whatever the code: see bench.py 1d
    from dataclasses import dataclass
    t1 = clock()

    @dataclass(frozen=True, slots=True)
    class HostCodegen:  # the fields of tilelang_hostcg.HostCodegen, generated the same way
        """A frozen, slotted dataclass."""
        name: str
        build: "Callable"
        supports_target: "Callable | None" = None
        priority: int = 0

    t2 = clock()
    import importlib
    count = int(extra)  # modules in all: the package and count - 1 modules in it
    importlib.import_module("bench_empty")
    for i in range(count - 1):
        importlib.import_module(f"bench_empty.m{i}")
    t3 = clock()
    loaded = count
elif mode == "import":
    import tilelang_hostcg
    t1 = t2 = t3 = clock()
    loaded = 0
else:
    raise SystemExit(f"unknown mode {mode!r}")
c3 = cpu()
import json
ms = lambda a, b: (b - a) * 1e3
print(json.dumps({"import": ms(t0, t1), "discover": ms(t1, t2), "load": ms(t2, t3),
                  "first_use": ms(t0, t3), "first_use_cpu": ms(c0, c3), "loaded": loaded,
                  "records": locals().get("records", 0)}))
'''


def run_probe(mode: str, env: Mapping[str, str], cwd: Path, kind: str = BENCH_KIND, *,
              tvm: bool = False, extra: str = "") -> dict[str, Any]:
    """Run :data:`PROBE` in a fresh interpreter (with TVM imported first when ``tvm``);
    returns its phase times (ms) and the wall time of the whole process (``wall``, ms)."""
    start = time.perf_counter()
    argv = [sys.executable, "-c", PROBE, mode, kind, "tvm" if tvm else "-", extra]
    proc = subprocess.run(argv, capture_output=True, text=True, env=dict(env), cwd=cwd)
    wall = (time.perf_counter() - start) * 1e3
    if proc.returncode != 0:
        raise RuntimeError(f"probe {mode!r} failed:\n{proc.stdout}\n{proc.stderr}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    result["wall"] = wall
    return result

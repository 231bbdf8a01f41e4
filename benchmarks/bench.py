"""Performance benchmark of tilelang-hostcg, printed as one table with ratios.

Run from the repository root::

    python benchmarks/bench.py           # full run (about a minute on 2 cores)
    python benchmarks/bench.py --quick   # fewer repetitions, no 3000-distribution case

Sections (every fresh process of sections 1 and 1d imports TVM and makes its targets
before the clock starts, as a compiler driver has done before it asks for a codegen):

1. Discovery in a fresh process with N synthetic installed distributions (there is no
   discovery cache: every first use scans), against a naive loader
   (``importlib.metadata.entry_points(group=...)`` then ``ep.load()``) and against
   stevedore's cached ``NamedExtensionManager`` (when stevedore is installed:
   ``pip install -e '.[bench]'``). "discovery call" is the in-process time of the
   call that reads the entry points, modules already imported; "first use" is the
   whole fresh-process path: import, discover, load the kind's three plugins and
   resolve ``Target("test")``, run interleaved with the naive loader and with the floor
   of any first use under the contract (``packaging.requirements`` imported, as many
   frozen, slotted dataclasses made as our records beyond the naive loader's, every
   ``entry_points.txt`` read through ``distributions()``, the plugins imported). 1c compares
   loading those three plugin modules and resolving with importing the same modules
   by hand.
1d. The first use of ``Target("llvm")``: the import of our modules on that path
   (timed module by module in fresh processes), then discovery and resolution.
2. ``import tilelang_hostcg`` against ``python -c pass``.
3. Hot ``resolve_host_codegen`` against its floor (a dict lookup on the ``Target``, as
   its cache is), a dict lookup by ``target.kind.name`` (a call through TVM's FFI) and
   a TileLang-style registry.
4. ``build()`` against ``tvm.tirx.build`` on the same kernel (interleaved runs).
5. One distribution advertising 10,000 host kinds: ``tilelang-hostcg list --load``
   against a naive ``ep.load()`` loop over the same entry points (fresh processes;
   both import TVM, which ``list --load`` does to report what
   the TVM in use can build), which shows whether listing and loading stay linear.
5b. One kind with 2,000 and 8,000 codegens registered by one lazy module: the CPU time of
   the kind's first use (import, load, resolve), in process: four times the codegens
   should cost about four times the CPU.
6. Start-up: ``python -c pass`` in a venv without the package and in one with a plain
   ``pip install`` of this checkout (``--editable`` adds an editable install), fresh
   processes interleaved: what every Python process pays once the package is installed.
7. A TileLang compile (``tilelang_compile.py``, in a TileLang environment) with the
   integration against stock, and the CPU time of our code per compile (cProfile).
8. Activation: ``import tilelang`` with the example plugin installed, activation on
   against off, fresh processes interleaved, in the same TileLang environment.
9. Plain apache-tvm with a plugin installed: ``import tvm`` with activation on against
   off and the entry point's own CPU; how many of our modules ``import tvm`` imports (a count
   in a fresh process, as ``tests/import_cost.py`` says); steady-state ``tvm.compile`` routed against stock;
   the first compile of a fresh process, with our own code's share
   (``--only tvm`` runs this section alone).
10. apache-tvm patched natively (``patches/apache-tvm-0.27.diff``), a plugin installed:
   steady-state ``tvm.compile`` per compile, stock, stock again (the run's noise floor),
   routed and native interleaved in one process, as ratios to stock, and the native API's
   own time per compile (``--only native`` runs this section alone).

Figures are medians over repetitions (section 3: the best of its repeats). Every guard is
judged by one rule, with its spread printed (the quartiles of the figure's samples: one
per repetition, or per interleaved round for a ratio): PASS when the figure is at or under
its limit, MISS when over, and "within noise" when the limit lies within the spread, as
this run cannot tell them apart. Figures kept for information (targets retired because
they no longer serve users) print ``info``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
import venv
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # for tests.kernels
from _synth import (  # noqa: E402
    BENCH_MODULES,
    make_empty_package,
    make_many_kinds_site,
    make_site,
    run_probe,
)

TARGETS: list[tuple[str, str, str]] = []
"""The summary: (name, verdict, detail); verdict PASS, MISS, NOISE (printed "within
noise") or info."""


def _spread(samples: Iterable[float]) -> tuple[float, float]:
    """The measured spread of a figure: the quartiles of the samples it comes from (one
    per repetition: a run's time, or the ratio of one interleaved round). One sample has
    no spread."""
    values = sorted(samples)
    if len(values) < 2:
        return values[0], values[0]
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q3


def _verdict(figure: float, limit: float, samples: Iterable[float]) -> tuple[str, float, float]:
    """The one rule of every guard (a figure must be at most ``limit``): ``NOISE`` when the
    limit lies within the figure's measured spread (the spread of ``samples``, widened to
    hold the figure itself), since this run cannot tell the figure from the limit; else
    ``PASS`` at or under the limit, ``MISS`` over it. Returns the verdict and the spread."""
    low, high = _spread(samples)
    low, high = min(low, figure), max(high, figure)
    if low <= limit <= high and low != high:
        return "NOISE", low, high
    return ("PASS" if figure <= limit else "MISS"), low, high


def _guard(name: str, figure: float, limit: float, samples: Iterable[float], *,
           unit: str = "x", digits: int = 3, note: str = "", holds: bool = True,
           broken: str = "") -> None:
    """A guard: ``figure`` against ``limit`` (both in ``unit``), judged by :func:`_verdict`
    from the ``samples`` it comes from, with the spread printed. ``holds=False`` (a condition
    beside the figure, ``broken`` saying which) is a MISS whatever the figure."""
    values = list(samples)
    verdict, low, high = _verdict(figure, limit, values)
    spread = (f"spread {low:.{digits}f}-{high:.{digits}f}{unit} (quartiles of {len(values)})"
              if len(values) > 1 else "one sample: no spread measured")
    if verdict == "NOISE":
        spread += ": within noise of the limit"
    if not holds:
        verdict = "MISS"
    detail = f"{figure:.{digits}f}{unit} (target <= {limit:g}{unit}; {spread})"
    TARGETS.append((name, verdict, detail + (f"; {note}" if note else "") + (f"; {broken}" if not holds else "")))


def _info(name: str, detail: str) -> None:
    """A figure shown beside the guards, with no target (a retired one, say)."""
    TARGETS.append((name, "info", detail))


def _median(values: Iterable[float]) -> float:
    return statistics.median(list(values))


def _fmt_ms(value: float | None) -> str:
    return "-" if value is None else f"{value:8.2f}"


def _ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or b is None or b == 0 else f"{a / b:6.2f}x"


def _table(title: str, header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]
    line = "  ".join("-" * w for w in widths)
    print(f"\n{title}")
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip())
    print(line)
    for row in rows:
        cells = [str(c).ljust(w) if i == 0 or not any(ch.isdigit() for ch in str(c))
                 else str(c).rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))]
        print("  ".join(cells).rstrip())


def _clean_env(root: Path) -> dict[str, str]:
    """The environment of the fresh processes: no controls, no PYTHONPATH, and bytecode
    cached next to the sources (``__pycache__``), as pip compiles it at install time.
    (``PYTHONPYCACHEPREFIX`` would cost every import about 50 us more here.)"""
    return {k: v for k, v in os.environ.items()
            if not k.startswith("TILELANG_HOSTCG_")
            and k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}


def _have_stevedore() -> bool:
    try:
        import stevedore  # noqa: F401
    except ImportError:
        return False
    return True


# ----------------------------------------------------------------------- 1. discovery
def bench_discovery(root: Path, sizes: list[int], reps: int, stevedore: bool) -> None:
    cwd = root / "cwd"
    cwd.mkdir()
    xdg = root / "xdg"
    base_env = _clean_env(root)
    base_env["XDG_CACHE_HOME"] = str(xdg)

    def clear_stevedore() -> None:
        shutil.rmtree(xdg / "python-entrypoints", ignore_errors=True)

    rows_call: list[list[str]] = []
    rows_first: list[list[str]] = []
    rows_load: list[list[str]] = []
    load_size = 1000 if 1000 in sizes else sizes[-1]
    for n in sizes:
        t0 = time.perf_counter()
        site = make_site(root, n)
        env = dict(base_env, PYTHONPATH=str(site))
        made = time.perf_counter() - t0
        modes: list[tuple[str, str, Callable[[], None] | None]] = [
            ("hostcg", "hostcg", None), ("naive", "naive", None), ("by-hand", "byhand", None)]
        if stevedore:
            modes += [("stevedore-warm", "stevedore", None),
                      ("stevedore-cold", "stevedore", clear_stevedore)]
        ours = partial(run_probe, env=env, cwd=cwd, tvm=True, extra=",".join(BENCH_MODULES))
        records = ours("hostcg")["records"]  # warm-up too
        modes.insert(2, ("floor", "floor-first", None))
        results: dict[str, list[dict[str, Any]]] = {name: [] for name, _, _ in modes}

        def probe(mode: str, records: int = records,
                  ours: Callable[..., dict[str, Any]] = ours) -> dict[str, Any]:
            if mode == "floor-first":
                return ours(mode, extra=f"{records}:{','.join(BENCH_MODULES)}")
            return ours(mode)

        for _ in range(2):  # warm-up: page cache, bytecode, stevedore's cache written
            for _name, mode, _clear in modes:
                probe(mode)
        for _ in range(reps):  # interleaved: each round runs every mode once
            for name, mode, clear in modes:
                if clear is not None:
                    clear()
                results[name].append(probe(mode))
                if clear is not None:  # leave stevedore's cache warm for its warm run
                    probe(mode)
        # 1c compares two differences of about a tenth of a millisecond between fresh
        # processes: more runs, interleaved, make its median steady.
        load_runs = {"hostcg": list(results["hostcg"]), "by-hand": list(results["by-hand"])}
        for _ in range(2 * reps):
            for name, mode in (("hostcg", "hostcg"), ("by-hand", "byhand")):
                load_runs[name].append(probe(mode))
        loaded = {r["loaded"] for rs in results.values() for r in rs}
        if loaded != {3}:
            raise RuntimeError(f"expected 3 plugins loaded everywhere, got {loaded}")

        def med(name: str, key: str, results: dict[str, list[dict[str, Any]]] = results,
                ) -> float | None:
            rs = results.get(name)
            return _median(r[key] for r in rs) if rs else None

        naive_call, naive_first = med("naive", "discover"), med("naive", "first_use")
        results.pop("by-hand")  # 1c only (load_runs)
        for name in results:
            call, first = med(name, "discover"), med(name, "first_use")
            rows_call.append([str(n), name, _fmt_ms(call), _ratio(call, naive_call)])
            rows_first.append([str(n), name, _fmt_ms(med(name, "import")), _fmt_ms(call),
                               _fmt_ms(med(name, "load")), _fmt_ms(first),
                               _ratio(first, naive_first)])
        ours_first = med("hostcg", "first_use")
        ours_cpu, naive_cpu = med("hostcg", "first_use_cpu"), med("naive", "first_use_cpu")
        assert ours_first is not None and naive_first is not None
        assert ours_cpu is not None and naive_cpu is not None
        ours_load = _median(r["load"] for r in load_runs["hostcg"])
        hand_load = _median(r["load"] for r in load_runs["by-hand"])
        assert ours_load is not None
        rows_load.append([str(n), _fmt_ms(ours_load), _fmt_ms(hand_load),
                          _ratio(ours_load, hand_load)])
        if n == load_size:
            _info(f"loading and resolving the kind's plugins vs importing them by hand, N={n}",
                  f"{ours_load:.2f} vs {hand_load:.2f} ms, {ours_load / hand_load:.2f}x "
                  "(was a target, <= 1.2x with the loading alone)")
        floor_first = med("floor", "first_use")
        assert floor_first is not None
        if n in (1000, 3000):
            _info(f"floor of a first use under the contract, N={n}",
                  f"{floor_first:.2f} ms, {floor_first / naive_first:.2f}x naive: "
                  f"packaging.requirements imported, {records} frozen, slotted dataclasses "
                  "made (the records beyond the naive loader's), every entry_points.txt read "
                  "through distributions() and read_text(), the 3 plugins imported; no other "
                  "code")
        if n in (1000, 3000):  # the targets are set at 1000 and 3000; other sizes are shown
            _guard(f"fresh-process first use vs naive, N={n}", ours_first / naive_first, 1.1,
                   [o["first_use"] / b["first_use"] for o, b in zip(results["hostcg"], results["naive"],
                                                                    strict=True)],
                   digits=2, note=f"{ours_first:.2f} vs {naive_first:.2f} ms; CPU time {ours_cpu:.2f} "
                                  f"vs {naive_cpu:.2f} ms, {ours_cpu / naive_cpu:.2f}x")
        print(f"  N={n}: environment written in {made:.1f} s, {reps} runs per mode", flush=True)
    _table("1a. Discovery call (in-process, modules already imported), ms",
           ["N", "loader", "median", "vs naive"], rows_call)
    _table("1b. First use in a fresh process, TVM already imported (import + discover + load "
           "the kind's 3 plugins), ms",
           ["N", "loader", "import", "discover", "load", "total", "vs naive"], rows_first)
    _table("1c. Loading the kind's 3 plugin modules and resolving (fresh process, modules of "
           "ours and the discovery done), ms",
           ["N", "load + resolve", "import by hand", "ratio"], rows_load)
    if not stevedore:
        print("   (stevedore not installed: its columns are skipped; "
              "pip install -e '.[bench]' adds them)")


# ----------------------------------------------------------------------- 1d. our modules
def bench_our_modules(root: Path, reps: int) -> None:
    """Import of our modules on the first-use path: in fresh processes with TVM imported
    and ``Target("llvm")`` made (the baseline, before the clock starts), the modules that
    ``import tilelang_hostcg`` plus ``resolve_host_codegen(Target("llvm"))`` import are
    imported one by one (timed), then the resolution runs (discovery, loading the core's
    codegen). The whole first use is timed in other processes.

    Two floors are measured beside it, in the same kind of process: generating a
    frozen, slotted dataclass with ``HostCodegen``'s fields (which the contract keeps),
    and importing as many empty modules (what an import costs before any code runs)."""
    env = dict(_clean_env(root), XDG_CACHE_HOME=str(root / "xdg-modules"))
    cwd = root / "cwd"
    probe = partial(run_probe, env=env, cwd=cwd, tvm=True)
    for _ in range(2):
        learned = probe("llvm")  # warm-up: page cache, bytecode
    modules: list[str] = learned["loaded"]
    extra = ",".join(modules)
    floor_probe = partial(run_probe, env=dict(env, PYTHONPATH=str(make_empty_package(
        root, len(modules)))), cwd=cwd, tvm=True, extra=str(len(modules)))
    floor_probe("floor")  # warm-up
    imports, after, whole, dataclass_s, empty_s = [], [], [], [], []
    for _ in range(reps):
        got = probe("modules", extra=extra)
        imports.append(got["import"])
        after.append(got["load"])
        full = probe("llvm")
        whole.append(full["first_use"])
        floor = floor_probe("floor")
        dataclass_s.append(floor["discover"])
        empty_s.append(floor["load"])
    i, a, w = _median(imports), _median(after), _median(whole)
    d, e = _median(dataclass_s), _median(empty_s)
    _table(f"1d. First use of Target('llvm') in a fresh process, TVM already imported "
           f"({len(modules)} modules of ours), ms", ["phase", "median"],
           [["import of our modules on the first-use path", _fmt_ms(i)],
            ["  then discovery + resolution", _fmt_ms(a)],
            ["import tilelang_hostcg + first resolve (whole)", _fmt_ms(w)],
            ["floor: generating a dataclass like HostCodegen", _fmt_ms(d)],
            [f"floor: importing {len(modules)} empty modules (a package and its modules)",
             _fmt_ms(e)],
            ["  our import less both floors (bytecode and bodies)", _fmt_ms(i - d - e)]])
    _info("import of our modules on the first-use path",
          f"{i:.2f} ms (was a target, <= 2 ms; whole first use {w:.2f} ms; floors: HostCodegen "
          f"{d:.2f} ms, {len(modules)} empty imports {e:.2f} ms)")


# ----------------------------------------------------------------------- 5. many kinds
_NAIVE_LOAD_ALL = """
import importlib.metadata, sys
import tvm  # list --load imports it too: it reports which codegens the TVM in use can build
eps = importlib.metadata.entry_points(group="tilelang.host_codegen")
loaded = [ep.load() for ep in eps if ep.name.startswith("many_")]
assert len(loaded) == int(sys.argv[1]), len(loaded)
"""


def bench_many_kinds(root: Path, kinds: int, reps: int) -> None:
    site = make_many_kinds_site(root, kinds)
    env = dict(_clean_env(root), PYTHONPATH=str(site), XDG_CACHE_HOME=str(root / "xdg-many"))
    cwd = root / "cwd"

    def wall(argv: list[str]) -> float:
        start = time.perf_counter()
        subprocess.run(argv, check=True, env=env, cwd=cwd, stdout=subprocess.DEVNULL)
        return (time.perf_counter() - start) * 1e3

    ours_argv = [sys.executable, "-m", "tilelang_hostcg", "list", "--load"]
    naive_argv = [sys.executable, "-c", _NAIVE_LOAD_ALL, str(kinds)]
    wall(ours_argv)  # warm-up: page cache, bytecode
    ours, naive = [], []
    for _ in range(reps):
        ours.append(wall(ours_argv))
        naive.append(wall(naive_argv))
    o, n = _median(ours), _median(naive)
    _table(f"5. One distribution with {kinds} kinds (fresh process wall time; both import TVM), ms",
           ["command", "median", "ratio"],
           [["tilelang-hostcg list --load", _fmt_ms(o), _ratio(o, n)],
            ["naive ep.load() loop (+ import tvm)", _fmt_ms(n), ""]])
    _guard(f"list --load of {kinds} kinds vs naive ep.load() loop", o / n, 1.5,
           [a / b for a, b in zip(ours, naive, strict=True)], digits=2, note=f"{o - n:.0f} ms more")


# ----------------------------------------------------------------------- 5b. many codegens
_MANY_CODEGENS = """\
import tilelang_hostcg as hc


def _build(mod, target):
    return mod


for _i in range({n}):
    hc.register_host_codegen("test", hc.HostCodegen(f"cg-{{_i}}", _build, priority=(_i * 7) % 5))
"""


def bench_many_codegens(root: Path, sizes: tuple[int, int], reps: int) -> None:
    """CPU time of a kind's first use (import, load, resolve) when one lazy module
    registers N codegens for it, in this process, for two sizes."""
    import importlib

    from tvm.target import Target

    from tilelang_hostcg import Registry

    folder = root / "many-codegens"
    folder.mkdir()
    sys.path.insert(0, str(folder))
    target = Target("test")
    cpu: dict[int, float] = {}
    samples: dict[int, list[float]] = {}
    try:
        for n in sizes:
            times = []
            for rep in range(reps + 1):  # the first is a warm-up
                name = f"bench_many_codegens_{n}_{rep}"
                (folder / f"{name}.py").write_text(_MANY_CODEGENS.format(n=n))
                importlib.invalidate_caches()
                registry = Registry()
                registry.register_lazy_host_codegen("test", name)
                start = time.process_time()
                registry.resolve_host_codegen(target)
                times.append((time.process_time() - start) * 1e3)
                sys.modules.pop(name, None)
            cpu[n], samples[n] = _median(times[1:]), times[1:]
    finally:
        sys.path.remove(str(folder))
    small, large = sizes
    ratio = cpu[large] / cpu[small]
    _table("5b. One kind, N codegens from one lazy module (CPU of the first use, in process), ms",
           ["codegens", "median", "ratio"],
           [[f"{small:,}", _fmt_ms(cpu[small]), ""],
            [f"{large:,}", _fmt_ms(cpu[large]), _ratio(cpu[large], cpu[small])]])
    _guard(f"loading {large:,} codegens of one kind vs {small:,}", ratio, 5.0,
           [b / a for a, b in zip(samples[small], samples[large], strict=True)],
           note=f"for {large // small}x the codegens; linear is {large // small}x")


# ----------------------------------------------------------------------- 2. import
def bench_import(root: Path, reps: int) -> None:
    env = _clean_env(root)
    cwd = root / "cwd"

    def wall(code: str) -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=cwd)
        return (time.perf_counter() - start) * 1e3

    code_import = "import tilelang_hostcg"
    for _ in range(3):
        wall("pass"), wall(code_import)
    base, ours = [], []
    for _ in range(reps):
        base.append(wall("pass"))
        ours.append(wall(code_import))
    inproc = [run_probe("import", env, cwd)["import"] for _ in range(max(5, reps // 2))]
    b, o = _median(base), _median(ours)
    _table("2. Import cost (fresh process wall time), ms",
           ["command", "median", "over pass"],
           [["python -c pass", _fmt_ms(b), ""],
            ["python -c 'import tilelang_hostcg'", _fmt_ms(o), _fmt_ms(o - b)],
            ["  (in-process time of the import)", _fmt_ms(_median(inproc)), ""]])
    _guard("import tilelang_hostcg over python -c pass", o - b, 5.0,
           [a - c for a, c in zip(ours, base, strict=True)], unit=" ms", digits=2)


# ----------------------------------------------------------------------- 3. resolve
def bench_resolve(reps: int) -> None:
    from tvm.target import Target

    import tilelang_hostcg
    from tilelang_hostcg import HostCodegen

    target = Target("llvm")
    resolve = tilelang_hostcg.resolve_host_codegen
    codegen = resolve(target)
    by_target = {target: codegen}  # the floor: resolve's hot path is a dict lookup on the Target
    by_kind = {"llvm": codegen}
    # A TileLang-style registry: kind -> list of codegens, first that matches wins.
    tl_registry: dict[str, list[HostCodegen]] = {
        "llvm": [HostCodegen("llvm-other", codegen.build, lambda t: False), codegen]}
    tl_loaded = {"llvm"}

    def tilelang_style(target_host: Any) -> HostCodegen:
        kind = target_host.kind.name
        if kind not in tl_loaded:
            raise AssertionError
        for item in tl_registry.get(kind, ()):
            if item.matches(target_host):
                return item
        raise ValueError(kind)

    assert tilelang_style(target) is codegen is by_target[target]
    loops = 200_000

    def per_call(stmt: Callable[[], Any]) -> list[float]:
        """ns per call in each of the ``reps`` repeats."""
        return [t / loops * 1e9 for t in timeit.repeat(stmt, number=loops, repeat=reps)]

    runs = {"resolve_host_codegen(target)": per_call(lambda: resolve(target)),
            "dict[target] (the floor)": per_call(lambda: by_target[target]),
            "dict[target.kind.name]": per_call(lambda: by_kind[target.kind.name]),
            "TileLang-style registry": per_call(lambda: tilelang_style(target))}
    ours, floor, lookup, tl = (min(values) for values in runs.values())
    _table("3. Hot resolve (best of repeats), ns per call",
           ["call", "ns", "vs dict[target]", "vs dict[target.kind.name]"],
           [[name, f"{min(values):7.0f}", _ratio(min(values), floor), _ratio(min(values), lookup)]
            for name, values in runs.items()])
    resolve_runs = runs["resolve_host_codegen(target)"]
    # Judged against its floor measured in this run (a dict lookup on the Target, resolve's
    # own hot path), never against an absolute figure from another day or machine: the
    # cache check around that lookup (the generation and the controls) may cost at most 3.5x.
    _guard("hot resolve_host_codegen vs its floor, a dict lookup on the Target", ours / floor, 3.5,
           [a / b for a, b in zip(resolve_runs, runs["dict[target] (the floor)"], strict=True)], digits=2)
    _guard("hot resolve vs TileLang-style registry", ours / tl, 1.0,
           [a / b for a, b in zip(resolve_runs, runs["TileLang-style registry"], strict=True)], digits=2)
    _info("hot resolve in ns",
          f"{ours:.0f} ns vs its floor {floor:.0f} ns (and {ours / lookup:.2f}x a dict lookup by "
          f"target.kind.name, which calls TVM's FFI: {lookup:.0f} ns)")


# ----------------------------------------------------------------------- 4. build
def bench_build(reps: int) -> None:
    import tvm

    import tilelang_hostcg
    from tests.kernels import vector_add

    def timed(fn: Callable[[], Any]) -> float:
        start = time.perf_counter()
        fn()
        return (time.perf_counter() - start) * 1e3

    ours_fn = lambda: tilelang_hostcg.build(vector_add, "llvm")  # noqa: E731
    tvm_fn = lambda: tvm.tirx.build(vector_add, target="llvm")  # noqa: E731
    for _ in range(2):
        ours_fn(), tvm_fn()
    ours, base, ratios = [], [], []
    for i in range(reps):
        if i % 2:
            o, b = timed(ours_fn), timed(tvm_fn)
        else:
            b, o = timed(tvm_fn), timed(ours_fn)
        ours.append(o)
        base.append(b)
        ratios.append(o / b)
    ratio = _median(ratios)
    _table("4. build() vs tvm.tirx.build (vector_add, llvm, interleaved), ms",
           ["call", "median", "ratio"],
           [["tilelang_hostcg.build", _fmt_ms(_median(ours)), f"{ratio:6.3f}x"],
            ["tvm.tirx.build", _fmt_ms(_median(base)), ""]])
    _guard("build() vs tvm.tirx.build", ratio, 1.02, ratios)


# ----------------------------------------------------------------------- 6. start-up
def _bare_venv(path: Path) -> str:
    venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt").create(path)
    return str(path / "bin" / "python")


# What a process with the package installed must not have imported at start-up.
_STARTUP_HEAVY = ("tvm", "tilelang", "importlib.metadata", "importlib_metadata", "packaging",
                  "typing", "tilelang_hostcg")


def _process_cost(python: str, env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """CPU time (user + system, the kernel's accounting) and wall time of one fresh
    ``python -c pass``, in milliseconds."""
    start = time.perf_counter()
    pid = os.posix_spawn(python, [python, "-c", "pass"], env)  # type: ignore[arg-type]
    _, status, usage = os.wait4(pid, 0)
    wall = (time.perf_counter() - start) * 1e3
    if status != 0:
        raise RuntimeError(f"{python} -c pass failed: status {status} (cwd {cwd})")
    return (usage.ru_utime + usage.ru_stime) * 1e3, wall


def bench_startup(root: Path, runs: int, editable: bool) -> None:
    """``python -c pass`` in a venv without the package and in one with it installed by a
    plain (non-editable) ``pip install`` of this checkout, with its dependencies; with
    ``editable``, a third venv with ``pip install -e``. Whatever the wheel ships that
    runs at start-up (the ``.pth`` of the TileLang start-up hook) is measured: CPU time
    (the stable figure, the target) and wall time of fresh processes, interleaved, and
    which heavy modules a process with the package has imported (none is expected)."""
    project = HERE.parent
    envs = {"without the package": _bare_venv(root / "startup-bare"),
            "pip install (wheel)": _bare_venv(root / "startup-wheel")}
    installs = [("pip install (wheel)", [str(project)])]
    if editable:
        envs["pip install -e"] = _bare_venv(root / "startup-editable")
        installs.append(("pip install -e", ["-e", str(project)]))
    for name, what in installs:
        proc = subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check",
                               "--no-input", "--python", envs[name], "install", "-q", *what],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"pip --python {envs[name]} install {' '.join(what)} failed "
                               f"(pip 22.3 or later is needed here):\n{proc.stdout}\n{proc.stderr}")
    pth = sorted(p.name for p in (root / "startup-wheel").glob("lib/python*/site-packages/*.pth"))
    env, cwd = _clean_env(root), root / "cwd"
    cwd.mkdir(exist_ok=True)
    probe = f"import sys; print(','.join(m for m in {_STARTUP_HEAVY!r} if m in sys.modules))"
    loaded = subprocess.run([envs["pip install (wheel)"], "-c", probe], capture_output=True,
                            text=True, check=True, env=env, cwd=cwd).stdout.strip()

    names = list(envs)
    cpu: dict[str, list[float]] = {name: [] for name in names}
    wall: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(5):  # warm-up: page cache, bytecode
        for name in names:
            _process_cost(envs[name], env, cwd)
    for i in range(runs):
        for name in names[i % len(names):] + names[:i % len(names)]:  # rotate the order
            used, took = _process_cost(envs[name], env, cwd)
            cpu[name].append(used)
            wall[name].append(took)
    base_cpu, base_wall = _median(cpu[names[0]]), _median(wall[names[0]])
    rows = [[name, _fmt_ms(_median(cpu[name])),
             "" if name == names[0] else f"{_median(cpu[name]) - base_cpu:+.2f}",
             _fmt_ms(_median(wall[name])),
             "" if name == names[0] else f"{_median(wall[name]) - base_wall:+.2f}"]
            for name in names]
    _table(f"6. Start-up: python -c pass, fresh processes, {runs} interleaved runs each, ms "
           f"(.pth files of the installed wheel: {', '.join(pth) or 'none'}; heavy modules "
           f"imported with it: {loaded or 'none'})",
           ["venv", "CPU median", "difference", "wall median", "difference"], rows)
    diff = _median(cpu["pip install (wheel)"]) - base_cpu
    _guard("start-up with the package installed over without (CPU time)", diff, 0.5,
           [a - b for a, b in zip(cpu["pip install (wheel)"], cpu[names[0]], strict=True)],
           unit=" ms", digits=2, note=f"heavy modules imported: {loaded or 'none'} (target: none)",
           holds=not loaded, broken=f"it imported {loaded}")
    _info("start-up with the package installed over without (wall time)",
          f"{_median(wall['pip install (wheel)']) - base_wall:+.2f} ms")
    if editable:
        _info("start-up with an editable install over without (CPU time)",
              f"{_median(cpu['pip install -e']) - base_cpu:+.2f} ms")


# ----------------------------------------------------------------------- check's probe build
_CHECK_PROBE = """
import json, sys, time
import tilelang_hostcg.cli._checks as checks
if sys.argv[1] == "without":
    checks.isolated = lambda bound: lambda client: None  # check as it was before it built a probe
seen, probed = [], checks.probed_client
def watched(run):
    doc, found = probed(run)
    seen.append(found)
    return doc, found
checks.probed_client = watched
start = time.perf_counter()
doc = checks.check_document()
found = seen[0] if seen else None  # the probe's own build time, as its process measured it (never in a document)
print(json.dumps([time.perf_counter() - start, found and found.seconds, found and found.confirmed]))
"""


def bench_check_probe(section: str, python: str, env: dict[str, str], cwd: Path, rounds: int) -> None:
    """``check`` (its document, in fresh processes, after the imports) with its probe build (in a process
    of its own: an interpreter start and the compiler's import come with it) and without, interleaved:
    wall time, side by side; the probe build's own time (guard: 1 s)."""
    script = cwd / "check_probe.py"
    script.write_text(_CHECK_PROBE)
    runs: dict[str, list[list[Any]]] = {"without": [], "with": []}
    for i in range(rounds):
        for name in (("without", "with") if i % 2 else ("with", "without")):
            out = subprocess.run([python, str(script), name], capture_output=True, text=True, env=env, cwd=cwd,
                                 check=True)
            runs[name].append(json.loads(out.stdout.splitlines()[-1]))
    called = {r[2] for r in runs["with"]}
    without, with_probe = (_median(r[0] * 1e3 for r in runs[name]) for name in ("without", "with"))
    probe_ms = [r[1] * 1e3 for r in runs["with"] if r[1] is not None]
    _table(f"{section}. check with and without its probe build, fresh processes, {rounds} interleaved runs "
           f"each, wall ms (probe confirmed the route: {called})", ["case", "wall median", "ratio"],
           [["check without the probe", _fmt_ms(without), _ratio(without, without)],
            ["check with the probe", _fmt_ms(with_probe), _ratio(with_probe, without)]])
    _guard(f"check's probe build ({section}), its own wall time", _median(probe_ms) if probe_ms else float("inf"),
           1000.0, probe_ms or [float("inf")], unit=" ms", holds=called == {True},
           broken="the probe build did not confirm the route")
    _info(f"check with its probe build vs without ({section})",
          f"{_fmt_ms(with_probe)} vs {_fmt_ms(without)} ms, {with_probe - without:+.1f} ms")


# ----------------------------------------------------------------------- 7. TileLang
def _tilelang_python(given: str | None) -> str | None:
    if given:
        return given
    envs = os.environ.get("TILELANG_HOSTCG_TEST_ENVS") or str(HERE.parent / ".venv-tilelang")
    python = Path(envs) / "tilelang-0.1.15" / "bin" / "python"
    return str(python) if python.exists() else None


@contextlib.contextmanager
def _installed_in(python: str, *what: str) -> Iterator[None]:
    """``pip install`` of ``what`` (dependencies resolved) into the TileLang environment of
    ``python`` for the time of the block; what it added is uninstalled afterwards."""
    def pip(*args: str) -> str:
        return subprocess.run([python, "-m", "pip", "--disable-pip-version-check", "--no-input",
                               *args], check=True, capture_output=True, text=True).stdout

    def names() -> set[str]:
        return {d["name"] for d in json.loads(pip("list", "--format", "json"))}

    before = names()
    pip("install", "-q", *what)
    try:
        yield
    finally:
        added = names() - before
        if added:
            pip("uninstall", "-q", "-y", *sorted(added))


def bench_tilelang(python: str | None, rounds: int) -> None:
    """``benchmarks/tilelang_compile.py`` in a TileLang environment, with this checkout's
    ``tilelang_hostcg`` first on ``sys.path``: a GEMM lowered with host code, stock and
    with the integration, and the CPU time of our code per compile (profiled)."""
    if python is None:
        print("\n7. TileLang compile: skipped, no TileLang environment (give --tilelang-python, "
              "or run the TileLang tests once: they build .venv-tilelang/)")
        _info("TileLang compile with the integration vs stock", "not measured (no TileLang)")
        return
    env = dict(_clean_env(HERE), PYTHONPATH=str(HERE.parent))
    with _installed_in(python, str(HERE.parent)):  # its dependencies; the checkout comes first
        proc = subprocess.run([python, str(HERE / "tilelang_compile.py"), "--json", "--rounds",
                               str(rounds)], capture_output=True, text=True, env=env, cwd=HERE.parent)
    if proc.returncode != 0:
        raise RuntimeError(f"tilelang_compile.py failed under {python}:\n{proc.stdout}\n{proc.stderr}")
    doc = json.loads(proc.stdout.strip().splitlines()[-1])
    rows, ratios = [], {}
    for label, index in (("wall", 0), ("CPU", 1)):
        for pick_name, pick in (("median", _median), ("min", min)):
            s_ = pick(t[index] for t in doc["stock"]) * 1e3
            o_ = pick(t[index] for t in doc["ours"]) * 1e3
            ratios[(label, pick_name)] = o_ / s_
            rows.append([f"{pick_name} {label} time", _fmt_ms(s_), _fmt_ms(o_), f"{o_ / s_:6.3f}x"])
    _table(f"7. TileLang {doc['tilelang']} {doc['what']}, GEMM {doc['size']}^3, {doc['rounds']} "
           "rounds each, alternating, ms", ["figure", "stock", "with the integration", "ratio"],
           rows)
    ratio = ratios[("CPU", "median")]
    _guard("TileLang compile with the integration vs stock (median CPU time)", ratio, 1.01,
           [o[1] / b[1] for o, b in zip(doc["ours"], doc["stock"], strict=True)],
           note=f"median wall {ratios[('wall', 'median')]:.3f}x, min wall {ratios[('wall', 'min')]:.3f}x")
    ours_ms = doc["our_cpu_ms_per_compile"]
    _guard("CPU time in our code per TileLang compile (cProfile)", ours_ms, 1.0, [ours_ms],
           unit=" ms")


def bench_activation(python: str | None, rounds: int) -> None:
    """``python -c 'import tilelang'`` in a TileLang environment with this checkout and the
    example plugin installed (``pip install``, removed again afterwards): activation on
    (the integration installs itself) against off (``TILELANG_HOSTCG_AUTO_INSTALL=0``,
    stock TileLang), fresh processes interleaved, CPU time of each."""
    if python is None:
        _info("import tilelang with activation vs stock", "not measured (no TileLang)")
        return
    with _installed_in(python, str(HERE.parent), str(HERE.parent / "plugins" / "tilelang-hostcg-stamp")):
        env, cwd = _clean_env(HERE), Path(tempfile.mkdtemp(prefix="hostcg-activation-"))
        check = "import sys, tilelang; print('tilelang_hostcg.tilelang' in sys.modules and " \
                "sys.modules['tilelang_hostcg.tilelang'].is_installed())"
        active = subprocess.run([python, "-c", check], capture_output=True, text=True, env=env,
                                cwd=cwd, check=True).stdout.strip()
        cases = {"stock (activation off)": dict(env, TILELANG_HOSTCG_AUTO_INSTALL="0"),
                 "activation on": env}
        cpu: dict[str, list[float]] = {name: [] for name in cases}
        for i in range(rounds + 1):
            for name in list(cases)[i % 2:] + list(cases)[:i % 2]:
                proc = subprocess.Popen([python, "-c", "import tilelang"], env=cases[name], cwd=cwd)
                _, status, usage = os.wait4(proc.pid, 0)
                proc.returncode = os.waitstatus_to_exitcode(status)
                if status != 0:
                    raise RuntimeError(f"{python} -c 'import tilelang' failed ({name})")
                if i:  # the first round warms the page cache
                    cpu[name].append((usage.ru_utime + usage.ru_stime) * 1e3)
        # Activation's own CPU, steadier than the difference of two 2-second medians:
        # stock ``import tilelang``, then the activation timed in the same process (the
        # import of our modules, the discovery, install()).
        own = [float(subprocess.run([python, "-c", _ACTIVATION_COST], capture_output=True,
                                    text=True, env=cases["stock (activation off)"], cwd=cwd,
                                    check=True).stdout.split()[0]) for _ in range(7)]
        bench_check_probe("8b", python, env, cwd, max(3, rounds // 5))
    stock, on = (_median(cpu[name]) for name in cases)
    cost = _median(own)
    _table(f"8. import tilelang with the example plugin installed, fresh processes, {rounds} "
           f"interleaved runs each, CPU ms (integration installed when on: {active})",
           ["case", "CPU median", "ratio"],
           [[name, _fmt_ms(_median(cpu[name])), _ratio(_median(cpu[name]), stock)] for name in cases])
    print(f"   activation's own CPU, timed in the process after a stock import tilelang "
          f"(7 runs): {cost:.2f} ms, {cost / stock:.2%} of the stock import")
    stock_runs, on_runs = (cpu[name] for name in cases)  # interleaved: run i of each is a round
    _guard("import tilelang with activation vs stock (median CPU time)", on / stock, 1.01,
           [a / b for a, b in zip(on_runs, stock_runs, strict=True)], note=f"activated: {active}",
           holds=active == "True", broken="the integration did not install itself")
    _info("activation's own CPU after a stock import tilelang (in-process, median of 7)",
          f"{cost:.2f} ms, {(stock + cost) / stock:.3f}x the stock import")


_ACTIVATION_COST = """
import time
import tilelang
start = time.process_time()
from tilelang_hostcg.tilelang._activation import activate
activate()
spent = (time.process_time() - start) * 1e3
import tilelang_hostcg.tilelang as integration
assert integration.is_installed(), "activation did not install the integration"
print(spent)
"""


# ----------------------------------------------------------------------- 9. plain TVM
_TVM_KERNEL = """
from tvm.script import tirx as T


@T.prim_func
def vector_add(a: T.handle, b: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    C = T.match_buffer(c, (n,), "float32")
    for i in range(n):
        C[i] = A[i] + B[i]
"""

_TVM_OWN_COST = """
import os, sys, time
import tvm  # TILELANG_HOSTCG_AUTO_INSTALL=0: stock; our entry point returned at once
for name in [m for m in sys.modules if m.startswith("tilelang_hostcg")]:
    del sys.modules[name]
del os.environ["TILELANG_HOSTCG_AUTO_INSTALL"]
start = time.process_time()
from tilelang_hostcg.tvm._activation import autoload
autoload()
spent = (time.process_time() - start) * 1e3
assert sys.modules["tilelang_hostcg.tvm"].is_installed(), "the entry point did not route TVM"
print(spent)
"""

_TVM_STEADY = _TVM_KERNEL + """
import sys, time, statistics, json
import tvm
build = sys.modules["tvm.tirx.build"]
route, watched = build.tir_to_runtime, tvm.tirx.build  # ours: the route, and the watch on TVM's build
assert route.__module__ == "tilelang_hostcg.tvm._route"
cases = {True: (route, watched), False: (route.__wrapped__, getattr(watched, "__wrapped__", watched))}
ours, stock = [], []
for _ in range(3):
    tvm.compile(vector_add, target="llvm")  # warm: first use, caches
for i in range(int(sys.argv[1])):
    for routed in ((True, False) if i % 2 else (False, True)):
        build.tir_to_runtime, tvm.tirx.build = cases[routed]
        start = time.perf_counter()
        tvm.compile(vector_add, target="llvm")
        (ours if routed else stock).append((time.perf_counter() - start) * 1e3)
print(json.dumps([statistics.median(ours), statistics.median(stock)]))
"""

_TVM_FIRST = _TVM_KERNEL + """
import cProfile, pstats, sys, time, json
import tvm
profile = cProfile.Profile()
start = time.process_time()
profile.enable()
tvm.compile(vector_add, target="llvm")
profile.disable()
spent = (time.process_time() - start) * 1e3
stats = pstats.Stats(profile)
# A build callback's own time is TVM's codegen (an FFI call, which cProfile does not list
# apart): leave it out of our share.
ours = sum(tt for (path, _, func), (_, _, tt, _, _) in stats.stats.items()
           if "tilelang_hostcg" in path and not (path.endswith("_targets.py") and func == "__call__"))
routed = sys.modules["tvm.tirx.build"].tir_to_runtime.__module__ == "tilelang_hostcg.tvm._route"
print(json.dumps([spent, ours * 1e3, routed]))
"""


def bench_tvm(root: Path, rounds: int) -> None:
    """Plain apache-tvm with a third-party plugin installed (a throwaway environment layered
    over this one, with a ``rocm`` hook plugin: ``import tvm`` routes every TIR build and TVM's
    own codegens are chosen). ``import tvm``: activation on against off
    (``TILELANG_HOSTCG_AUTO_INSTALL=0``, where our entry point returns at once), fresh
    processes interleaved, CPU time, and the entry point's own CPU timed in the process;
    steady-state ``tvm.compile`` routed against stock in one process (the route and the watch on
    ``tvm.tirx.build``, and TVM's originals, swapped between interleaved compiles); the first ``tvm.compile`` of a fresh
    process, routed against stock, with the CPU of our own code (cProfile)."""
    from tests.plugin_factory import Plugin, install, module
    from tilelang_hostcg.testing import PluginEnvironment

    env = PluginEnvironment(root / "tvm-env" / "venv")
    install(env, root / "tvm-plugin", [Plugin(
        "bench-rocm-hook", hooks={"rocm": "bench_rocm_hook:HOOKS"},
        files={"bench_rocm_hook.py": module("HOOKS = (_hook('bench_rocm'),)\n")})])
    cwd = root / "tvm-cwd"
    cwd.mkdir(exist_ok=True)
    # Bytecode cached next to the sources, as pip compiles it at install time (_clean_env).
    on = {k: v for k, v in env.environ().items() if k != "PYTHONDONTWRITEBYTECODE"}
    off = dict(on, TILELANG_HOSTCG_AUTO_INSTALL="0")
    warm = cwd / "warm.py"  # writes the bytecode of every module of ours a first compile imports
    warm.write_text(_TVM_KERNEL + "import tvm\ntvm.compile(vector_add, target='llvm')\n")
    subprocess.run([env.python, str(warm)], env=on, cwd=cwd, check=True, capture_output=True)
    cases = {"stock (activation off)": off, "plugin installed, activation on": on}
    cpu: dict[str, list[float]] = {name: [] for name in cases}
    for i in range(rounds + 1):
        for name in list(cases)[i % 2:] + list(cases)[:i % 2]:
            proc = subprocess.Popen([env.python, "-c", "import tvm"], env=cases[name], cwd=cwd)
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            if status != 0:
                raise RuntimeError(f"{env.python} -c 'import tvm' failed ({name})")
            if i:  # the first round warms the page cache
                cpu[name].append((usage.ru_utime + usage.ru_stime) * 1e3)
    own = [float(subprocess.run([env.python, "-c", _TVM_OWN_COST], capture_output=True, text=True,
                                env=off, cwd=cwd, check=True).stdout.split()[0]) for _ in range(7)]
    stock, active = (_median(cpu[name]) for name in cases)
    cost = _median(own)
    _table(f"9. import tvm with a plugin installed, fresh processes, {rounds} interleaved runs "
           "each, CPU ms", ["case", "CPU median", "ratio"],
           [[name, _fmt_ms(_median(cpu[name])), _ratio(_median(cpu[name]), stock)] for name in cases])
    print(f"   the entry point's own CPU, timed in the process after a stock import tvm "
          f"(7 runs): {cost:.2f} ms, {cost / stock:.2%} of the stock import")
    _guard("import tvm with a plugin installed vs stock (entry point's own CPU)",
           (stock + cost) / stock, 1.01, [(stock + c) / stock for c in own], digits=4)
    _info("import tvm with a plugin installed vs stock (median CPU of fresh processes)",
          f"{active / stock:.3f}x")
    bench_tvm_import_modules(env.python, on, cwd)

    bench_check_probe("9c", env.python, on, cwd, max(3, rounds // 3))
    script = cwd / "steady.py"
    script.write_text(_TVM_STEADY)
    ours, base = json.loads(subprocess.run([env.python, str(script), str(rounds * 10)], capture_output=True,
                                           text=True, env=on, cwd=cwd, check=True).stdout.splitlines()[-1])
    script = cwd / "first.py"
    script.write_text(_TVM_FIRST)
    first: dict[str, list[list[Any]]] = {"stock": [], "routed": []}
    for i in range(5):
        for name in (("stock", "routed") if i % 2 else ("routed", "stock")):
            out = subprocess.run([env.python, str(script)], capture_output=True, text=True,
                                 env=off if name == "stock" else on, cwd=cwd, check=True)
            first[name].append(json.loads(out.stdout.splitlines()[-1]))
    assert all(r[2] for r in first["routed"]) and not any(r[2] for r in first["stock"])
    f_stock, f_routed = (_median(r[0] for r in first[name]) for name in ("stock", "routed"))
    f_ours = _median(r[1] for r in first["routed"])
    _table("9b. tvm.compile(vector_add, 'llvm'), ms", ["case", "routed", "stock", "ratio"],
           [["steady state (wall, in one process)", _fmt_ms(ours), _fmt_ms(base), _ratio(ours, base)],
            ["first compile of a fresh process (CPU)", _fmt_ms(f_routed), _fmt_ms(f_stock),
             _ratio(f_routed, f_stock)]])
    print(f"   the first routed compile's extra CPU is our share: {f_routed - f_stock:+.1f} ms (importing "
          f"the registry, packaging and the plugins, discovery, TVM's defaults); of it, our functions' "
          f"own time (cProfile tottime, imports and TVM's codegen left out): {f_ours:.2f} ms")
    _guard("steady-state tvm.compile routed vs stock", ours / base, 1.02, [ours / base],
           note="medians of interleaved pairs in one process")
    _info("first tvm.compile of a fresh process routed vs stock (CPU)",
          f"{f_routed / f_stock:.3f}x, {f_routed - f_stock:+.1f} ms (our share); our functions' own time "
          f"{f_ours:.1f} ms")


def bench_tvm_import_modules(python: str, environ: dict[str, str], cwd: Path) -> None:
    """How many of our modules ``import tvm`` imports with the routed plugin installed, in a fresh
    process of that environment (counted as ``tests/import_cost.py`` says: ``sys.modules`` entries of
    the package, package ``__init__``s apart, the start-up hook and the switches' module left out)."""
    from tests.import_cost import PROGRAM, TARGET, summary

    out = subprocess.run([python, "-c", PROGRAM], capture_output=True, text=True, env=environ, cwd=cwd, check=True)
    document = json.loads(out.stdout.splitlines()[-1])
    count = len(document["modules"])
    print(f"   import tvm with a routed plugin: {summary(document)}, target <= {TARGET}; route in place: "
          f"{document['installed']}")
    _guard(f"import tvm with a routed plugin: {summary(document)}, target <= {TARGET}", count, TARGET, [count],
           unit=" modules", digits=0, holds=bool(document["installed"]), broken="the route is not in place",
           note="a count in a fresh process, not a time")
    _info("import tvm with a routed plugin: our modules imported", ", ".join(
        name.removeprefix("tilelang_hostcg.") for name in document["modules"]))


# ------------------------------------------------------------- 10. native apache-tvm
_NATIVE_STEADY = _TVM_KERNEL + """
import sys, time, statistics, json
import tvm
import tilelang_hostcg.native as native
import tilelang_hostcg.tvm as integration
import tvm_ffi
build = sys.modules["tvm.tirx.build"]
assert integration.CLIENT.native() is not None, "TVM is not patched natively"
own = build.tir_to_runtime
# TVM's extension point: the adapter's global functions, registered at import tvm; off, TVM builds stock.
adapter = {name: tvm.get_global_func(name) for name in (build.HOST_CODEGEN_FUNC, build.HOST_CODEGEN_HOOK_FUNC)}


def use(route, native_on):
    build.tir_to_runtime = route
    for name, func in adapter.items():
        if native_on:
            tvm.register_global_func(name, func, override=True)
        elif tvm.get_global_func(name, allow_missing=True) is not None:
            tvm_ffi.registry.remove_global_func(name)


from tilelang_hostcg import Registry
# The routed path, made by hand (install() patches nothing where TVM is native), with a registry of
# its own. "stock again" is stock once more: its ratio to stock is this run's noise floor.
route = integration.CLIENT._enter((tvm, Registry(discover=True))).routes[0].ours
cases = {"stock": (own, False), "stock again": (own, False), "routed": (route, False), "native": (own, True)}
times = {name: [] for name in cases}
cpu = {name: [] for name in cases}  # this thread's CPU time: what a busy machine's other processes leave alone
for name in cases:  # warm: each path's first use
    use(*cases[name])
    for _ in range(3):
        tvm.compile(vector_add, target="llvm")
order = list(cases)
for i in range(int(sys.argv[1])):
    for name in order[i % 4:] + order[:i % 4]:
        use(*cases[name])
        start, start_cpu = time.perf_counter(), time.thread_time()
        tvm.compile(vector_add, target="llvm")
        cpu[name].append((time.thread_time() - start_cpu) * 1e3)
        times[name].append((time.perf_counter() - start) * 1e3)
use(own, True)
# The API's own time inside real compiles (this thread's CPU, caches as a compile leaves them): the
# adapter's host codegen function, less TVM's own codegen_build it calls.
stock_codegen, inner, inside = build.codegen_build, [], []
def timed_codegen(mod, target):
    start = time.thread_time()
    try:
        return stock_codegen(mod, target)
    finally:
        inner.append(time.thread_time() - start)
registered = adapter[build.HOST_CODEGEN_FUNC]
def timed_host_codegen(mod, target_host):
    inner.clear()
    start = time.thread_time()
    built = registered(mod, target_host)
    inside.append((time.thread_time() - start - sum(inner)) * 1e6)
    return built
build.codegen_build = timed_codegen
tvm.register_global_func(build.HOST_CODEGEN_FUNC, timed_host_codegen, override=True)
for _ in range(100):
    tvm.compile(vector_add, target="llvm")
build.codegen_build = stock_codegen
tvm.register_global_func(build.HOST_CODEGEN_FUNC, registered, override=True)
# The API's own time per compile in a loop (warm), as the patched TVM calls it for this kernel (one build_host, no
# device module), and as a compiler that plans once per compile calls it (one plan for a cuda device:
# apply_hooks and build), the defaults trivial, against calling the default itself.
import timeit
from tvm.target import Target
host, device, mod = Target("llvm"), Target({"kind": "cuda", "arch": "sm_90a"}), tvm.IRModule({})
defaults = {"llvm": lambda m, t: m}
def best(func):
    return min(timeit.repeat(func, number=2000, repeat=5)) / 2000 * 1e6
api1 = best(lambda: native.build_host(mod, host, defaults=defaults, client="tvm"))
def planned():
    made = native.plan(host, device, codegens=defaults, client="tvm")
    made.build(made.apply_hooks(mod))
api2 = best(planned)
direct = best(lambda: defaults["llvm"](mod, host))
print(json.dumps({"times": times, "cpu": cpu, "calls": native.calls(), "api1_us": api1, "api2_us": api2,
                  "inside_us": inside, "direct_us": direct}))
"""


def bench_native(root: Path, rounds: int) -> None:
    """apache-tvm patched natively (``patches/apache-tvm-0.27.diff`` applied to a hard-linked copy of
    this environment) with a third-party plugin installed (a ``rocm`` hook: TVM's own codegens are
    chosen): steady-state ``tvm.compile`` in one process, stock (the patch's fallback, as without
    tilelang-hostcg), stock again (the noise floor), routed (our replacement of ``tir_to_runtime``)
    and native (TVM calling the adapter registered at its host codegen global functions) interleaved;
    each case's median wall time and its ratio to stock, with the spread of the ratio over blocks of
    interleaved rounds."""
    import site as site_module

    from tests.native_patches import PATCHES, apply_patch, standalone_copy
    from tests.plugin_factory import Plugin, install, module
    from tilelang_hostcg.testing import PluginEnvironment

    source = next(Path(p) for p in site_module.getsitepackages() if (Path(p) / "tvm").is_dir())
    _, site = standalone_copy(source, root / "native-env")
    apply_patch(site, PATCHES / "apache-tvm-0.27.diff")
    env = PluginEnvironment(root / "native-env")
    install(env, root / "native-plugin", [Plugin(
        "bench-rocm-hook", hooks={"rocm": "bench_rocm_hook:HOOKS"},
        files={"bench_rocm_hook.py": module("HOOKS = (_hook('bench_rocm'),)\n")})])
    cwd = root / "native-cwd"
    cwd.mkdir(exist_ok=True)
    script = cwd / "steady.py"
    script.write_text(_NATIVE_STEADY)
    compiles = rounds * 10
    proc = subprocess.run([env.python, str(script), str(compiles)], capture_output=True, text=True,
                          env=env.environ(), cwd=cwd)
    if proc.returncode != 0:
        raise RuntimeError(f"the native benchmark failed:\n{proc.stderr}")
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out["calls"].get("tvm"), "the native path was not taken"
    wall, cpu = out["times"], out["cpu"]

    def ratios(times: dict[str, list[float]], name: str) -> tuple[float, list[float]]:
        """``name``'s median over stock's, and the same ratio for each block of 10 interleaved rounds."""
        blocks = [_median(times[name][i:i + 10]) / _median(times["stock"][i:i + 10]) for i in range(0, compiles, 10)]
        return _median(times[name]) / _median(times["stock"]), blocks

    stock = _median(wall["stock"])
    _table(f"10. tvm.compile(vector_add, 'llvm') with apache-tvm patched natively, a plugin installed, "
           f"{compiles} interleaved compiles each (one thread's CPU ms, and wall ms)",
           ["path", "CPU median", "ratio", "per compile", "wall median", "ratio"],
           [[name, _fmt_ms(_median(cpu[name])), f"{ratios(cpu, name)[0]:.3f}x",
             f"{(_median(cpu[name]) - _median(cpu['stock'])) * 1e3:+.0f} us", _fmt_ms(_median(wall[name])),
             f"{ratios(wall, name)[0]:.3f}x"] for name in wall])
    floor, floor_blocks = ratios(cpu, "stock again")
    low, high = _spread(floor_blocks)
    print(f"   noise floor of this run: stock again / stock = {floor:.3f}x CPU (spread {low:.3f}-{high:.3f}x over "
          f"blocks of 10), {ratios(wall, 'stock again')[0]:.3f}x wall")
    inside = out["inside_us"]
    print(f"   the native API's own time inside a compile (a plugin installed, TVM's default chosen; CPU of 100 "
          f"compiles): median {_median(inside):.1f} us, {_median(inside) / 1e3 / _median(cpu['stock']):.2%} of a "
          f"stock compile; in a loop, caches warm: API 1 build_host {out['api1_us']:.1f} us, API 2 plan for a cuda "
          f"device, apply_hooks and build {out['api2_us']:.1f} us (the default alone: {out['direct_us']:.2f} us)")
    figure, blocks = ratios(cpu, "native")
    _guard("steady-state tvm.compile native vs stock (CPU)", figure, 1.01, blocks,
           note=f"medians of interleaved compiles in one process; noise floor {floor:.3f}x")
    base = _median(cpu["stock"]) * 1e3
    _guard("tvm.compile native vs stock (the native API's own time inside a compile, added to a stock one)",
           (base + _median(inside)) / base, 1.01, [(base + us) / base for us in inside], digits=4)
    _info("steady-state tvm.compile native vs stock (wall)", f"{ratios(wall, 'native')[0]:.3f}x, stock {stock:.2f} ms")
    _info("steady-state tvm.compile native vs routed (CPU)",
          f"{_median(cpu['native']) / _median(cpu['routed']):.3f}x")


def main(argv: list[str] | None = None) -> int:
    """Run every section and print the tables and the PASS/MISS summary."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="fewer repetitions and no 3000-distribution environment")
    parser.add_argument("--sizes", type=int, nargs="+", default=None,
                        help="numbers of installed distributions (default 100 1000 3000)")
    parser.add_argument("--kinds", type=int, default=10_000,
                        help="kinds advertised by the one distribution of section 5 "
                             "(default 10000; 0 skips the section)")
    parser.add_argument("--startup-runs", type=int, default=None,
                        help="fresh processes per venv in section 6 (default 300; --quick 60)")
    parser.add_argument("--editable", action="store_true",
                        help="section 6 also measures an editable install")
    parser.add_argument("--tilelang-python", default=None,
                        help="interpreter of a TileLang environment for section 7 (default: "
                             "the TileLang tests' 0.1.15 environment when it exists)")
    parser.add_argument("--only", choices=["tvm", "native"], default=None,
                        help="run one section only (tvm: section 9, plain apache-tvm; native: section 10)")
    args = parser.parse_args(argv)
    if args.only == "tvm":
        return _only(lambda root: bench_tvm(root, 5 if args.quick else 15))
    if args.only == "native":
        return _only(lambda root: bench_native(root, 5 if args.quick else 15))
    sizes = args.sizes or ([100, 1000] if args.quick else [100, 1000, 3000])
    reps = 3 if args.quick else 11
    stevedore = _have_stevedore()
    root = Path(tempfile.mkdtemp(prefix="hostcg-bench-"))
    # Nothing of ours writes under XDG_CACHE_HOME; stevedore and TVM might.
    os.environ["XDG_CACHE_HOME"] = str(root / "xdg-inproc")
    started = time.perf_counter()
    print(f"tilelang-hostcg benchmark: Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
          f"sizes {sizes}, {reps} repetitions", flush=True)
    try:
        bench_discovery(root, sizes, reps, stevedore)
        bench_our_modules(root, reps * 2)
        bench_import(root, reps * 3)
        bench_resolve(5)
        bench_build(reps * 2 + 1)
        if args.kinds:
            bench_many_kinds(root, args.kinds, 1 if args.quick else 3)
        bench_many_codegens(root, (2_000, 8_000), reps)
        bench_startup(root, args.startup_runs or (60 if args.quick else 300), args.editable)
        bench_tilelang(_tilelang_python(args.tilelang_python), 3 if args.quick else 7)
        bench_activation(_tilelang_python(args.tilelang_python), 5 if args.quick else 25)
        bench_tvm(root, 5 if args.quick else 15)
        bench_native(root, 5 if args.quick else 15)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    _print_targets()
    print(f"\n(total {time.perf_counter() - started:.0f} s)")
    return 0


def _print_targets() -> None:
    """The summary: each guard with its verdict (:func:`_verdict`), each figure kept for information."""
    print("\nTargets (PASS/MISS when the limit lies outside the figure's spread; within noise "
          "when inside it)")
    shown = {"NOISE": "within noise"}
    for name, verdict, detail in TARGETS:
        print(f"  {shown.get(verdict, verdict)}  {name}: {detail}")


def _only(section: Callable[[Path], None]) -> int:
    """Run one section (``--only``) and print its targets."""
    root = Path(tempfile.mkdtemp(prefix="hostcg-bench-"))
    try:
        section(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    _print_targets()
    return 0


if __name__ == "__main__":
    sys.exit(main())

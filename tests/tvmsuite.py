"""Apache TVM's own host-codegen tests, stock and routed: the same outcome per test.

Usage (from the repository root, with the project's test venv)::

    .venv/bin/python tests/tvmsuite.py [--suite ../shared/tvmsuite] [--stamp] [-n 2] [--fresh]

The suite folder holds TVM's tests, unmodified, and ``tests.txt`` (one path a line). Two
throwaway environments are layered over the running interpreter's packages (apache-tvm and
this project, with its ``tvm.backends`` entry point): one with a third-party plugin that
serves none of the kinds the tests build (a ``rocm`` hook), so that ``import tvm`` routes
every TIR build through the registry while TVM's own codegens are the ones chosen, and,
with ``--stamp``, one with the stamp plugin (``plugins/tilelang-hostcg-stamp``). The suite
runs stock (the first environment with ``TILELANG_HOSTCG_AUTO_INSTALL=0``), routed with
the defaults only, and with the stamp plugin; the outcome of each test (passed, failed,
skipped, error, from pytest's JUnit XML) must be the same as stock, except, with the stamp
plugin, for the tests in :data:`STAMP_MAY_DIFFER` (the suite's README names them: an added
function changes symbol order and other functions' LLVM output). Exits 1 on any other
difference, 2 when the suite is missing or a run could not start.

Stock outcomes depend only on TVM, the suite and this machine: they are kept in
``${XDG_CACHE_HOME:-~/.cache}/tilelang-hostcg/tvmsuite/``, keyed by the versions of
apache-tvm, apache-tvm-ffi, pytest and Python and by a digest of the suite's files, and a
later run with the same key runs only the routed side (``--fresh`` runs stock again).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.plugin_factory import Plugin, build_source_wheels, install, module  # noqa: E402
from tilelang_hostcg.testing import PluginEnvironment  # noqa: E402

STAMP_MAY_DIFFER = frozenset({"test_alignment", "test_llvm_order_functions"})
"""Tests whose outcome the stamp plugin may change (by the suite's README)."""

ROUTED_CHECK = ("import sys, tvm; route = sys.modules['tvm.tirx.build'].tir_to_runtime; "
                "sys.exit(0 if route.__module__ == 'tilelang_hostcg.tvm._route' else 3)")


def outcomes(junit: Path) -> dict[str, str]:
    """Test id -> ``passed`` / ``failed`` / ``error`` / ``skipped`` from a JUnit XML report."""
    found: dict[str, str] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed"}.get(child.tag, child.tag)
                break
        found[name] = outcome
    return found


def run_suite(env: PluginEnvironment, suite: Path, label: str, workers: int, out: Path,
              extra_env: dict[str, str] | None = None) -> dict[str, str]:
    """Run the suite in ``env``; its outcomes by test id."""
    tests = [line.strip() for line in (suite / "tests.txt").read_text().splitlines() if line.strip()]
    junit = out / f"{label}.xml"
    cmd = [env.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}",
           *(["-n", str(workers)] if workers > 1 else ["-p", "no:xdist"]), *tests]
    # TVM's conftest.py installs its CI request hook (request_hook.py, not in the selection)
    # when CI=true: the suite runs as on a developer's machine, CI or not.
    environ = {k: v for k, v in env.environ(extra_env).items() if k != "CI"}
    started = time.monotonic()
    proc = subprocess.run(cmd, cwd=suite, env=environ, capture_output=True, text=True)
    if not junit.exists():
        sys.exit(f"tvmsuite: the {label} run did not start (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    found = outcomes(junit)
    counts = {k: sum(v == k for v in found.values()) for k in ("passed", "failed", "skipped", "error")}
    print(f"tvmsuite: {label}: {counts} in {time.monotonic() - started:.0f} s", flush=True)
    return found


def stock_cache(suite: Path) -> Path:
    """Where the stock outcomes of ``suite`` under the installed TVM are kept."""
    digest = hashlib.sha256()
    for path in sorted(p for p in suite.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(f"{path.relative_to(suite)}\0".encode() + path.read_bytes() + b"\0")
    key = "-".join([version("apache-tvm"), version("apache-tvm-ffi"), f"pytest{version('pytest')}",
                    f"py{platform.python_version()}", digest.hexdigest()[:16]])
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache, "tilelang-hostcg", "tvmsuite", f"stock-{key}.json")


def compare(stock: dict[str, str], other: dict[str, str], label: str, may_differ: frozenset[str]) -> list[str]:
    """Lines naming each test whose outcome differs from stock (beyond ``may_differ``)."""
    problems = []
    for name in sorted(set(stock) | set(other)):
        a, b = stock.get(name, "missing"), other.get(name, "missing")
        if a != b:
            allowed = name.rsplit("::", 1)[-1].split("[", 1)[0] in may_differ
            line = f"{label}: {name}: stock {a}, {label} {b}" + (" (allowed)" if allowed else "")
            print("tvmsuite: " + line)
            if not allowed:
                problems.append(line)
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--suite", type=Path, default=ROOT.parent / "shared" / "tvmsuite",
                        help="the suite folder (default: ../shared/tvmsuite from the repository root)")
    parser.add_argument("--stamp", action="store_true", help="also run it with the stamp plugin")
    parser.add_argument("-n", type=int, default=2, help="pytest-xdist workers per run (default 2)")
    parser.add_argument("--fresh", action="store_true", help="run stock even where its outcomes are kept")
    args = parser.parse_args(argv)
    suite = args.suite.resolve()
    if not (suite / "tests.txt").is_file():
        print(f"tvmsuite: no suite at {suite} (tests.txt missing)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="tvmsuite-") as tmp:
        root = Path(tmp)
        defaults = PluginEnvironment(root / "defaults" / "venv")
        install(defaults, root / "plugin", [Plugin(
            "tvmsuite-rocm-hook", hooks={"rocm": "tvmsuite_rocm_hook:HOOKS"},
            files={"tvmsuite_rocm_hook.py": module("HOOKS = (_hook('tvmsuite_rocm'),)\n")})])
        if subprocess.run([defaults.python, "-c", ROUTED_CHECK], env=defaults.environ()).returncode != 0:
            print("tvmsuite: import tvm did not route tir_to_runtime with a plugin installed", file=sys.stderr)
            return 1
        kept = stock_cache(suite)
        if kept.is_file() and not args.fresh:
            stock = json.loads(kept.read_text())
            print(f"tvmsuite: stock: the outcomes kept in {kept}", flush=True)
        else:
            stock = run_suite(defaults, suite, "stock", args.n, root, {"TILELANG_HOSTCG_AUTO_INSTALL": "0"})
            kept.parent.mkdir(parents=True, exist_ok=True)
            partial = kept.with_suffix(f".{os.getpid()}.partial")
            partial.write_text(json.dumps(stock, indent=0, sort_keys=True))
            partial.replace(kept)
        routed = run_suite(defaults, suite, "routed", args.n, root)
        problems = compare(stock, routed, "routed", frozenset())
        if args.stamp:
            stamp = PluginEnvironment(root / "stamp" / "venv")
            wheels = build_source_wheels(root / "stamp-wheel", [ROOT / "plugins" / "tilelang-hostcg-stamp"])
            stamp.pip("install", "-q", "--no-deps", "--no-index", *map(str, wheels))
            problems += compare(stock, run_suite(stamp, suite, "stamp", args.n, root), "stamp", STAMP_MAY_DIFFER)
    if problems:
        print(f"tvmsuite: {len(problems)} outcome(s) differ from stock", file=sys.stderr)
        return 1
    print(f"tvmsuite: the same outcome as stock for all {len(stock)} tests, but the differences "
          f"allowed above" if args.stamp else f"tvmsuite: the same outcome as stock for all {len(stock)} tests")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What the start-up hook costs a process that never imports TileLang.

Builds two fresh virtual environments, one with tilelang-hostcg installed from a wheel
of this checkout (so its ``tilelang_hostcg_hook.pth`` runs at every start) and one
without, and starts ``python -c pass`` in each, alternating, ``--runs`` times. Reports the medians, with
and without, of the interpreter's own measure of ``import site`` (``-X importtime``;
``site`` processes every ``.pth`` file), and of the CPU time (user + system, as the
kernel accounts it) and the wall time of the whole process; and which modules a
process with the hook has imported. The environments hold nothing else, so the hook's
``.pth`` is the first thing imported from ``site-packages``: the worst case for it::

    python benchmarks/startup_hook.py --runs 301
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("tvm", "tilelang", "importlib.metadata", "importlib_metadata", "packaging", "typing",
         "tilelang_hostcg", "tilelang_hostcg._registry", "tilelang_hostcg._discovery")


def make_env(path: Path, wheel: Path | None) -> str:
    venv.EnvBuilder(with_pip=False).create(path)
    python = str(path / "bin" / "python")
    if wheel is not None:
        subprocess.run([sys.executable, "-m", "pip", "--python", python, "install", "-q",
                        "--no-deps", "--no-index", str(wheel)], check=True)
    return python


def site_time_us(python: str) -> int:
    """``import site`` (cumulative, microseconds), as ``-X importtime`` reports it."""
    proc = subprocess.run([python, "-X", "importtime", "-c", "pass"], capture_output=True,
                          text=True, check=True)
    for line in proc.stderr.splitlines():
        parts = [p.strip() for p in line.removeprefix("import time:").split("|")]
        if len(parts) == 3 and parts[2] == "site":
            return int(parts[1])
    raise RuntimeError(f"no 'site' line in:\n{proc.stderr}")


def process_cost_ms(python: str) -> tuple[float, float]:
    """CPU time (user + system, from the kernel's accounting) and wall time of one
    ``python -c pass``, in milliseconds."""
    start = time.perf_counter()
    pid = os.posix_spawn(python, [python, "-c", "pass"], os.environ)
    _, status, usage = os.wait4(pid, 0)
    wall = (time.perf_counter() - start) * 1000
    if status != 0:
        raise RuntimeError(f"{python} -c pass failed: status {status}")
    return (usage.ru_utime + usage.ru_stime) * 1000, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=301)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                        str(root / "wheel"), str(ROOT)], check=True)
        wheel = next((root / "wheel").glob("tilelang_hostcg-*.whl"))
        with_hook = make_env(root / "with", wheel)
        without = make_env(root / "without", None)
        probe = ("import sys, json; print(json.dumps([sys.meta_path[0].__class__.__module__, "
                 f"[m for m in {HEAVY!r} if m in sys.modules]]))")
        first, loaded = json.loads(subprocess.run([with_hook, "-c", probe], capture_output=True,
                                                  text=True, check=True).stdout)
        for python in (with_hook, without):  # warm the page cache and .pyc files
            site_time_us(python)
        site: dict[str, list[int]] = {"with": [], "without": []}
        cpu: dict[str, list[float]] = {"with": [], "without": []}
        wall: dict[str, list[float]] = {"with": [], "without": []}
        for _ in range(args.runs):
            for key, python in (("with", with_hook), ("without", without)):
                site[key].append(site_time_us(python))
                used, took = process_cost_ms(python)
                cpu[key].append(used)
                wall[key].append(took)
    print(f"{args.runs} fresh processes per row and side, alternating")
    print(f"{'median of':36}{'without':>12}{'with hook':>12}{'difference':>12}")
    rows = (("import site (-X importtime), ms", site, 1e-3), ("python -c pass, CPU time, ms", cpu, 1.0),
            ("python -c pass, wall time, ms", wall, 1.0))
    for label, data, scale in rows:
        without_ms = statistics.median(data["without"]) * scale
        with_ms = statistics.median(data["with"]) * scale
        print(f"{label:36}{without_ms:>12.3f}{with_ms:>12.3f}{with_ms - without_ms:>12.3f}")
    print(f"first on sys.meta_path: {first}; heavy modules imported: {loaded or 'none'}")


if __name__ == "__main__":
    main()

"""Virtual environments with a real TileLang, for the integration tests.

Each environment is a plain venv (not layered over the test environment): ``torch``
first (a CPU build), then one ``tilelang`` release, as a user would install them. The
base (torch + TileLang) is built once and reused while its marker file is there: in
``$TILELANG_HOSTCG_TEST_ENVS`` when set (CI keeps it in an ignored folder of the
checkout), else in pytest's temporary folder. pip's own cache is left at its default,
so a second CI run downloads nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import venv
from pathlib import Path
from typing import Any

TORCH = "torch==2.13.0"
ROOT = Path(__file__).resolve().parents[1]
OURS = ("tilelang-hostcg", "tilelang-hostcg-stamp")


class TileLangEnv:
    """A venv with ``torch`` and one TileLang release; ``pip``/``run`` helpers."""

    def __init__(self, path: Path, version: str) -> None:
        self.path = path
        self.version = version
        self._runs = 0
        self.python = str(path / "bin" / "python")
        marker = path / "tilelang-hostcg-test-env.json"
        wanted = {"torch": TORCH, "tilelang": version, "python": sys.version.split()[0]}
        if not marker.exists() or json.loads(marker.read_text()) != wanted:
            venv.EnvBuilder(with_pip=True, clear=True).create(path)
            self.pip("install", "-q", TORCH)  # before tilelang: else pip fetches a CUDA torch
            self.pip("install", "-q", f"tilelang=={version}")
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


KERNELS = (Path(__file__).resolve().parent / "tilelang_kernels.py").read_text()
"""Kernels and helpers that scripts run in a TileLang environment start with."""

INTEGRATION_POINTS = KERNELS[KERNELS.index("\ndef integration_points"):]
"""The text of ``integration_points()`` alone, for scripts that must not import TileLang
before they choose to (it imports TileLang's modules only when called)."""

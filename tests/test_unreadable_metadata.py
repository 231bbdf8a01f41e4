"""Metadata this process may not read is one warning naming its folder, and fails
``check --strict``; a stale copy with bad metadata is one warning, not two.

Real wheels, installed by ``pip``. The unreadable plugin is installed under ``umask 077``
by this user (root here), and the commands run as another user (``nobody``, through
``setpriv``), as when a plugin was installed by another user of a shared environment:
its metadata folder and package folder are ``drwx------``, which ``importlib.metadata``
reads as no metadata at all (``Distribution.read_text`` swallows ``PermissionError``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tilelang_hostcg.testing import PluginEnvironment

from .plugin_factory import Plugin, build_wheels, install
from .plugin_factory import module as module_text

pytestmark = pytest.mark.slow

NOBODY = 65534
SETPRIV = shutil.which("setpriv")
needs_another_user = pytest.mark.skipif(
    os.geteuid() != 0 or SETPRIV is None,
    reason="reading another user's files needs root (to install as one user) and setpriv "
           "(to run as another)")


def _plugin(dist: str, priority: int, version: str = "1.0") -> Plugin:
    """A plugin of a ``c`` codegen named as its distribution (kinds TVM knows: ``check
    --strict`` passes with it)."""
    module = dist.replace("-", "_")
    # A working codegen (TVM's own C build): check's probe build confirms the route with it.
    register = (f"hc.register_host_codegen('c', hc.HostCodegen({dist!r}, "
                f"hc.global_func_host_codegen('target.build.c'), priority={priority}))\n")
    return Plugin(dist, version, codegens={"c": module}, files={f"{module}.py": module_text(register)})


def _names(doc: Any) -> list[str]:
    return [d["name"] for d in doc["distributions"]]


@pytest.fixture(scope="module")
def root() -> Iterator[Path]:
    """A folder every user may read (pytest's own temporary folder is root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="hcg-unreadable-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def env(root: Path) -> PluginEnvironment:
    """A readable plugin, and one installed by pip under ``umask 077``."""
    env = PluginEnvironment(root / "venv")
    install(env, root / "readable", [_plugin("hcgu-readable", 1)])
    wheels = build_wheels(root / "private", [_plugin("hcgu-private", 2)])
    old = os.umask(0o077)
    try:
        env.pip("install", "-q", "--no-deps", "--no-index", *map(str, wheels))
    finally:
        os.umask(old)
    return env


def _private_folder(env: PluginEnvironment) -> Path:
    (folder,) = env.site_packages.glob("hcgu_private-*.dist-info")
    return folder


def _as_user(user: int, command: list[str]) -> list[str]:
    assert SETPRIV is not None
    return [SETPRIV, f"--reuid={user}", f"--regid={user}", "--clear-groups", *command]


def _other_user_reaches(env: PluginEnvironment, user: int) -> None:
    """Skip, saying why, where ``user`` cannot run this environment's interpreter with this package: a
    folder above the checkout is closed to others (``mktemp -d`` makes one ``drwx------``)."""
    proc = subprocess.run(_as_user(user, [env.python, "-c", "import tilelang_hostcg"]), capture_output=True,
                          text=True, env=env.environ(), cwd="/", timeout=120)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"user {user} cannot run {env.python} with tilelang_hostcg ({last}): a folder above this "
                    "checkout is closed to other users; clone it into a folder others can enter to run this test")


def _check(env: PluginEnvironment, *argv: str, user: int | None = NOBODY) -> tuple[int, Any]:
    command = [env.python, "-m", "tilelang_hostcg", "check", "--json", *argv]
    if user is not None:
        _other_user_reaches(env, user)
        command = _as_user(user, command)
    proc = subprocess.run(command, capture_output=True, text=True, env=env.environ(),
                          cwd=env.path.parent, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, json.loads(proc.stdout)


@needs_another_user
def test_metadata_another_user_installed_under_umask_077_is_one_warning(
        env: PluginEnvironment) -> None:
    folder = _private_folder(env)
    assert folder.stat().st_mode & 0o777 == 0o700  # what umask 077 gave it
    code, doc = _check(env)
    naming = [p for p in doc["problems"] if repr(str(folder)) in p["message"]]
    assert len(naming) == 1, doc["problems"]
    assert naming[0]["severity"] == "warning" and "cannot be read" in naming[0]["message"]
    assert "chmod -R a+rX" in naming[0]["message"]
    assert code == 0 and doc["ok"] is True  # a warning: the readable plugin still loads
    assert _names(doc) == ["hcgu-readable", "tilelang-hostcg"]
    code, doc = _check(env, "--strict")
    assert code == 1 and doc["ok"] is False
    # Its owner reads it: no warning there.
    code, doc = _check(env, "--strict", user=None)
    assert code == 0, doc["problems"]
    assert _names(doc) == ["hcgu-private", "hcgu-readable", "tilelang-hostcg"]


@needs_another_user
def test_an_unreadable_entry_points_file_is_one_warning(root: Path) -> None:
    env = PluginEnvironment(root / "venv-file")
    install(env, root / "file", [_plugin("hcgu-file", 1)])
    (folder,) = env.site_packages.glob("hcgu_file-*.dist-info")
    (folder / "entry_points.txt").chmod(0o600)
    code, doc = _check(env, "--strict")
    naming = [p for p in doc["problems"] if repr(str(folder)) in p["message"]]
    assert len(naming) == 1 and "entry_points.txt cannot be read" in naming[0]["message"], (
        doc["problems"])
    assert code == 1


def test_a_stale_copy_with_bad_metadata_is_one_warning(root: Path) -> None:
    env = PluginEnvironment(root / "venv-stale")
    install(env, root / "new", [_plugin("hcgu-stale", 1)])
    stale_site = root / "stale-site"
    install(env, root / "old", [_plugin("hcgu-stale", 1, "0.9")],
            "--target", str(stale_site))
    (stale,) = stale_site.glob("hcgu_stale-*.dist-info")
    metadata = stale / "METADATA"
    metadata.write_bytes(metadata.read_bytes() + "Author: J\xfcrgen\n".encode("latin-1"))
    # After the environment's own site-packages on sys.path: the stale copy.
    (env.site_packages / "zz_stale_site.pth").write_text(f"{stale_site}\n")
    code, doc = _check(env, user=None)
    naming = [p for p in doc["problems"] if str(stale) in p["message"]]
    assert [p["code"] for p in naming] == ["duplicate-distribution"], doc["problems"]
    assert {"name": "hcgu-stale", "version": "1.0"} in doc["distributions"] and code == 0

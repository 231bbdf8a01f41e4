"""The compilers' native patches (``patches/``) applied to real installed copies of a compiler, with
``git apply`` (all or nothing): the files a diff changes are written anew (a hard-linked copy's
originals are never touched) and the distribution's ``RECORD`` lines of those files get their new
hashes, as a vendor's build would ship them. A diff's paths are rooted as in the compiler's
repository (TVM's package under ``python/``, tests beside it); an installed copy gets the package's
files only."""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
import subprocess
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PATCHES = ROOT / "patches"

PACKAGE_ROOTS = {"tilelang": "tilelang/", "tvm": "python/tvm/"}
"""Where each compiler's installed package lives in its repository."""


def record_hash(data: bytes) -> str:
    """A ``RECORD`` line's hash of ``data``."""
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def diff_paths(diff: Path) -> list[str]:
    """The repository paths ``diff`` changes or creates."""
    return re.findall(r"^\+\+\+ b/(\S+)", diff.read_text(encoding="utf-8"), re.MULTILINE)


def package_of(diff: Path) -> str:
    """The installed package ``diff`` changes (its one package root)."""
    found = {package for package, root in PACKAGE_ROOTS.items() for path in diff_paths(diff) if path.startswith(root)}
    if len(found) != 1:
        raise ValueError(f"{diff.name} changes {sorted(found) or 'no'} installed package(s), not one")
    return found.pop()


def patched_paths(diff: Path) -> list[str]:
    """The files (relative to ``site-packages``) ``diff`` changes in an installed copy."""
    package = package_of(diff)
    root = PACKAGE_ROOTS[package]
    return [package + "/" + path[len(root):] for path in diff_paths(diff) if path.startswith(root)]


def git_apply(folder: Path, diff: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """``git apply ARGS diff`` in ``folder`` (never inside another repository: paths are ``folder``'s)."""
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(folder.resolve().parent)}
    return subprocess.run(["git", "apply", *args, str(diff.resolve())], cwd=folder, env=env, check=check,
                          capture_output=True, text=True)


def apply_patch(site: Path, diff: Path) -> list[str]:
    """Apply ``diff`` to the installed package in ``site`` with ``git apply`` (all or nothing: a hunk
    that fails changes no file) and make the owning ``RECORD`` true again; the files changed."""
    package = package_of(diff)
    paths = patched_paths(diff)
    for path in paths:  # out of any hard link: written anew
        target = site / path
        if target.exists():
            data = target.read_bytes()
            target.unlink()
            target.write_bytes(data)
    strip = PACKAGE_ROOTS[package].count("/")  # a/, and the folders above the package
    proc = git_apply(site, diff, f"-p{strip}", f"--include={package}/*", check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"git apply {diff.name} in {site} failed (nothing changed):\n{proc.stderr}")
    for record in site.glob("*.dist-info/RECORD"):
        lines = record.read_text(encoding="utf-8").splitlines()
        listed = {line.split(",", 1)[0] for line in lines}
        if not listed & set(paths):
            continue
        out = []
        for line in lines:
            path = line.split(",", 1)[0]
            if path in paths:
                data = (site / path).read_bytes()
                line = f"{path},{record_hash(data)},{len(data)}"
            out.append(line)
        record.unlink()  # a hard link of the original: written anew
        record.write_text("\n".join(out) + "\n", encoding="utf-8")
    return paths


def record_problems(site: Path, paths: list[str]) -> list[str]:
    """Each of ``paths`` whose ``RECORD`` line does not hold its hash and size (or that no RECORD lists)."""
    found: dict[str, str] = {}
    for record in site.glob("*.dist-info/RECORD"):
        for line in record.read_text(encoding="utf-8").splitlines():
            path, _, rest = line.partition(",")
            if path in paths:
                found[path] = rest
    problems = []
    for path in paths:
        data = (site / path).read_bytes()
        if found.get(path) != f"{record_hash(data)},{len(data)}":
            problems.append(f"{path}: RECORD says {found.get(path)!r}")
    return problems


def link_copy(source: Path, dest: Path) -> None:
    """``dest`` as a copy of ``source`` whose files are hard links (a plain copy across file systems)."""
    if subprocess.run(["cp", "-al", str(source), str(dest)], capture_output=True).returncode != 0:
        shutil.copytree(source, dest, symlinks=True)


def standalone_copy(site: Path, dest: Path, *, without: tuple[str, ...] = ()) -> tuple[str, Path]:
    """A virtual environment at ``dest`` whose ``site-packages`` is a hard-linked copy of ``site``
    (nothing layered over anything), less the entries whose names start with one of ``without``;
    its python and its site-packages."""
    venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt").create(dest)
    python = dest / "bin" / "python"
    out = subprocess.run([str(python), "-c", "import site; print(site.getsitepackages()[0])"],
                         check=True, capture_output=True, text=True)
    new_site = Path(out.stdout.strip())
    shutil.rmtree(new_site)
    link_copy(site, new_site)
    for entry in new_site.iterdir():
        if entry.name.startswith(without):
            if entry.is_dir():
                shutil.rmtree(entry)
            else:
                entry.unlink()
    return str(python), new_site

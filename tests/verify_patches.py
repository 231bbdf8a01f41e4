"""Check the diffs of ``patches/`` against the compilers' real trees, as their maintainers' CI would:
``git apply --check`` (all or nothing), then, on the applied files, the compiler's own pinned ruff
(``ruff check`` and ``ruff format --check`` under its own configuration), codespell where its
pre-commit runs it, a Python 3.10 compile, and TVM's ASF header check. A tree for which no diff is
claimed is checked the other way: no diff of its compiler may fit (apply and pass the checks).

The trees are not in this repository: pass a clone of each repository (``--git OWNER/NAME=DIR``)
and the installed or unpacked wheels (``--tree LABEL=SITE_PACKAGES``), and the tools by version
(``--ruff 0.16.1=PATH``; ``--codespell``, ``--python310``). A tree or tool not given is reported
as not checked, never as passing. ``python -m tests.verify_patches --help`` says more; the table
it prints is the one of ``docs/native.md``."""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .native_patches import PACKAGE_ROOTS, PATCHES, diff_paths, git_apply, package_of


@dataclass(frozen=True)
class Tree:
    """A release or fork checked: ``repository`` at ``revision`` (a clone given with ``--git``), or an
    installed package (``label`` given with ``--tree``); ``diff``: the one claimed to apply, else
    ``None`` and ``reason`` says why none fits."""

    label: str
    compiler: str  # a key of PACKAGE_ROOTS
    repository: str | None = None
    revision: str | None = None
    diff: str | None = None
    reason: str = ""


TILELANG_MAIN = "a35008a42531c62b976ae4cec3855d4383db0f3c"
TVM_MAIN = "5d4dc8721307cf9677becacf0395c19be130e206"
CONFIG_OF = {"tilelang": ("tile-ai/tilelang", TILELANG_MAIN), "tvm": ("apache/tvm", TVM_MAIN)}
"""Whose checks an installed package's files get: its compiler's repository, at the revision checked."""

TREES = (
    Tree("tilelang 0.1.15 (PyPI wheel)", "tilelang", diff="tilelang-0.1.15.diff"),
    Tree("tilelang 0.1.14 (PyPI wheel)", "tilelang", diff="tilelang-0.1.15.diff"),
    Tree("tile-ai/tilelang main", "tilelang", "tile-ai/tilelang", TILELANG_MAIN, "tilelang-0.1.15.diff"),
    Tree("tile-ai/tilelang v0.1.13", "tilelang", "tile-ai/tilelang", "v0.1.13",
         reason="the registry layout: no BackendModule and no per-compilation context to carry a choice"),
    Tree("tile-ai/tilelang v0.1.12", "tilelang", "tile-ai/tilelang", "v0.1.12",
         reason="the registry layout: no BackendModule and no per-compilation context to carry a choice"),
    Tree("tile-ai/tilelang v0.1.11", "tilelang", "tile-ai/tilelang", "v0.1.11",
         reason="the hard-coded layout: an `llvm`/`c` chain in `tilelang/engine/lower.py`, no context"),
    Tree("tilelang-paddle 0.1.13 (PyPI wheel)", "tilelang",
         reason="the registry layout (`tilelang/backend/host_codegen.py` registry, no `module.py`)"),
    Tree("tile-ai/tilelang-musa", "tilelang", "tile-ai/tilelang-musa", "475bf79063776fc268d01bb8cabde24a92d753f8",
         reason="the registry layout, as 0.1.12-0.1.13"),
    Tree("MooreThreads/tilelang_musa", "tilelang", "MooreThreads/tilelang_musa",
         "dd1cce9bd966a0e6ec53b3dab30511c74542e3f3",
         reason="hard-coded: `host_codegen(host_mod, target_host)` has no device target, `c` builds with "
                "`target.build.c`"),
    Tree("tile-ai/tilelang-ascend", "tilelang", "tile-ai/tilelang-ascend", "95acbd7f7283f57f228aa4d016742ea165c03b84",
         reason="`lower()` never calls `host_codegen`: a host seam there would be dead code"),
    Tree("tile-ai/tilelang-hygon", "tilelang", "tile-ai/tilelang-hygon", "ab46683da6ce1db639cf42b31f49bafa3af23b88",
         "tilelang-0.1.15.diff"),
    Tree("tile-ai/tilelang-sunrise", "tilelang", "tile-ai/tilelang-sunrise", "af9602a0fee72a1986cd4611e130c0f68861f0ce",
         "tilelang-0.1.15.diff"),
    Tree("tile-ai/tilelang-metax", "tilelang", "tile-ai/tilelang-metax", "8ef105c79a81475ea27da1aa374a283bdc65e263",
         reason="hard-coded: an `llvm`/`c` chain whose `c` builds with `target.build.tilelang_c`, no context"),
    Tree("apache-tvm 0.27.0.post1 (PyPI wheel)", "tvm", diff="apache-tvm-0.27.diff"),
    Tree("apache/tvm main", "tvm", "apache/tvm", TVM_MAIN, "apache-tvm-main.diff"),
    Tree("apache/tvm v0.26.0", "tvm", "apache/tvm", "c7b458e946bc4266915da582457476bdcd9705ae",
         "apache-tvm-main.diff"),
    Tree("TVM bundled in tilelang 0.1.15 (PyPI wheel)", "tvm",
         reason="tile-ai's TVM fork: `apache-tvm-main.diff` applies, but its `build.py` does not import "
                "`DLDeviceType`, which the diff's host rule uses"),
)
"""Every release and fork checked; ``docs/native.md`` has the table this gives."""

CONFIGS = ("pyproject.toml", ".pre-commit-config.yaml", "docs/spelling_wordlist.txt", ".pymarkdown",
           "tests/lint/check_asf_header.py")
"""A repository's files the checks read (where it has them)."""


@dataclass
class Tools:
    """The checking tools given: ruff by version, codespell, pymarkdown, a Python 3.10."""

    ruff: dict[str, str]
    codespell: str | None
    pymarkdown: str | None
    python310: str | None


def _run(args: list[str], cwd: Path) -> tuple[bool, str]:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    return proc.returncode == 0, (proc.stdout + proc.stderr).strip()


def extract(clone: Path, revision: str, paths: list[str], dest: Path) -> list[str]:
    """Write each of ``paths`` that exists at ``revision`` of ``clone`` under ``dest``; those written."""
    written = []
    for path in paths:
        proc = subprocess.run(["git", "-C", str(clone), "show", f"{revision}:{path}"], capture_output=True)
        if proc.returncode == 0:
            (dest / path).parent.mkdir(parents=True, exist_ok=True)
            (dest / path).write_bytes(proc.stdout)
            written.append(path)
    return written


def pinned(config: Path, repo_url_part: str) -> str | None:
    """The ``rev`` a ``.pre-commit-config.yaml`` pins for the repository whose URL holds ``repo_url_part``."""
    if not config.is_file():
        return None
    found = re.search(rf"repo: \S*{re.escape(repo_url_part)}\S*\s+rev: [\"']?v?([\w.]+)", config.read_text())
    return found.group(1) if found else None


def lint(folder: Path, changed: list[str], tools: Tools) -> list[str]:
    """The compiler's own checks of ``changed`` in ``folder``: each line ``ok``, ``FAILED`` or ``not checked``."""
    results = []
    python = [p for p in changed if p.endswith(".py")]
    config = folder / ".pre-commit-config.yaml"
    version = pinned(config, "ruff-pre-commit")
    ruff = tools.ruff.get(version or "")
    if ruff is None:
        results.append(f"ruff {version}: not checked (no ruff {version} given)")
    else:
        for what in (["check"], ["format", "--check"]):
            ok, out = _run([ruff, *what, *python], folder)
            results.append(f"ruff {version} {' '.join(what)}: {'ok' if ok else 'FAILED: ' + out}")
    if pinned(config, "codespell") is not None:
        if tools.codespell is None:
            results.append("codespell: not checked (no codespell given)")
        else:
            ok, out = _run([tools.codespell, *changed], folder)
            results.append(f"codespell: {'ok' if ok else 'FAILED: ' + out}")
    markdown = [p for p in changed if p.endswith(".md")]
    if markdown and (folder / ".pymarkdown").is_file():
        if tools.pymarkdown is None:
            results.append("pymarkdown: not checked (no pymarkdown given)")
        else:
            ok, out = _run([tools.pymarkdown, "--config", ".pymarkdown", "scan", *markdown], folder)
            results.append(f"pymarkdown: {'ok' if ok else 'FAILED: ' + out}")
    if tools.python310 is None:
        results.append("Python 3.10 compile: not checked (no --python310 given)")
    else:
        ok, out = _run([tools.python310, "-c", "import sys, py_compile\nfor f in sys.argv[1:]: "
                        "py_compile.compile(f, doraise=True)", *python], folder)
        results.append(f"Python 3.10 compile: {'ok' if ok else 'FAILED: ' + out}")
    header = folder / "tests/lint/check_asf_header.py"
    if header.is_file():
        _run(["git", "init", "-q"], folder)
        _run(["git", "add", *changed], folder)
        ok, out = _run([sys.executable, str(header), "--check"], folder)
        results.append(f"ASF header: {'ok' if ok else 'FAILED: ' + out}")
    return results


def _files(tree: Tree, source: Path, paths: list[str], folder: Path) -> None:
    """Write ``tree``'s files of ``paths`` (repository paths) under ``folder``: from its clone at its
    revision, or from the installed package in ``source`` placed where its repository keeps it."""
    if tree.repository is not None:
        assert tree.revision is not None
        extract(source, tree.revision, paths, folder)
        return
    root = PACKAGE_ROOTS[tree.compiler]
    for path in paths:
        installed = source / tree.compiler / path[len(root):]
        if path.startswith(root) and installed.is_file():
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(installed, folder / path)


def check_diff(tree: Tree, source: Path, diff: Path, clones: dict[str, str],
               tools: Tools) -> tuple[bool | None, list[str]]:
    """Whether ``diff`` fits ``tree`` (it applies, and the applied files pass the compiler's checks;
    ``None``: it applies but the checks could not run), and the check lines. The checks read the
    configuration of the tree's own repository, or for an installed package its compiler's."""
    with tempfile.TemporaryDirectory(prefix="verify-patches-") as tmp:
        folder = Path(tmp) / "tree"
        folder.mkdir()
        _files(tree, source, diff_paths(diff), folder)
        proc = git_apply(folder, diff, "--check", check=False)
        if proc.returncode != 0:
            return False, [f"{diff.name}: git apply --check fails: {proc.stderr.strip()}"]
        lines = [f"{diff.name}: git apply --check: ok"]
        repository, revision = (tree.repository, tree.revision) if tree.repository else CONFIG_OF[tree.compiler]
        if repository not in clones or revision is None:
            return None, [*lines, f"checks: not run (no clone of {repository} given for its configuration)"]
        extract(Path(clones[repository]), revision, list(CONFIGS), folder)
        git_apply(folder, diff)
        checked = lint(folder, diff_paths(diff), tools)
        if any("FAILED" in line for line in checked):
            return False, [*lines, *checked]
        return (None if any("not checked" in line for line in checked) else True), [*lines, *checked]


def check_tree(tree: Tree, source: Path, clones: dict[str, str],
               tools: Tools) -> tuple[str, list[str], bool | None]:
    """The verdict for ``tree`` read from ``source`` (a clone, or the folder of an installed package),
    the check lines, and whether it holds what the table claims (its diff fits, or no diff of its
    compiler does): ``None`` where a diff applies but the checks could not run to say so."""
    if tree.diff is not None:
        fits, lines = check_diff(tree, source, PATCHES / tree.diff, clones, tools)
        return f"`{tree.diff}` applies", lines, fits
    lines, results = [], []
    for diff in sorted(PATCHES.glob("*.diff")):
        if package_of(diff) == tree.compiler:
            fits, checked = check_diff(tree, source, diff, clones, tools)
            lines.extend(checked)
            results.append(fits)
    holds = False if True in results else (None if None in results else True)
    return f"none fits: {tree.reason}", lines, holds


HELD = {True: "yes", False: "CLAIM FAILS", None: "applies; checks not run"}


def _pairs(values: list[str], what: str) -> dict[str, str]:
    pairs = {}
    for value in values:
        key, sep, path = value.partition("=")
        if not sep:
            raise SystemExit(f"{what} wants KEY=PATH, got {value!r}")
        pairs[key] = path
    return pairs


def main(argv: list[str] | None = None) -> int:
    """Check every tree given; print the table and the checks; exit 1 where a claim fails."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--git", action="append", default=[], metavar="OWNER/NAME=DIR",
                        help="a clone of a repository of the table")
    parser.add_argument("--tree", action="append", default=[], metavar="LABEL=SITE_PACKAGES",
                        help="the folder holding an installed package of the table (its label as listed)")
    parser.add_argument("--ruff", action="append", default=[], metavar="VERSION=PATH", help="a ruff executable")
    parser.add_argument("--codespell", help="a codespell executable (the version TileLang pins)")
    parser.add_argument("--pymarkdown", help="a pymarkdown executable (the version TileLang pins)")
    parser.add_argument("--python310", help="a Python 3.10 interpreter")
    args = parser.parse_args(argv)
    clones, installed = _pairs(args.git, "--git"), _pairs(args.tree, "--tree")
    tools = Tools(_pairs(args.ruff, "--ruff"), args.codespell, args.pymarkdown, args.python310)
    failed = False
    print("| tree | revision | verdict | checked here |\n|---|---|---|---|")
    details = []
    for tree in TREES:
        source = clones.get(tree.repository or "") if tree.repository else installed.get(tree.label)
        revision = tree.revision or "(the wheel)"
        if source is None:
            print(f"| {tree.label} | {revision} | {tree.diff or 'none: ' + tree.reason} | not checked (not given) |")
            continue
        verdict, lines, holds = check_tree(tree, Path(source), clones, tools)
        failed = failed or holds is False
        print(f"| {tree.label} | {revision} | {verdict} | {HELD[holds]} |")
        details.append((tree.label, lines))
    for label, lines in details:
        print(f"\n{label}:")
        for line in lines:
            print(f"  {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

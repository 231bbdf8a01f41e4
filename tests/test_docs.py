"""The documentation runs: every code block of ``docs/authoring.md`` is executed.

The guide's TOML is written as a real plugin's ``pyproject.toml``, its Python blocks
marked ``# file: PATH`` become that plugin's files, and the plugin is pip-installed
into a throwaway environment. Then the other Python blocks run there in fresh
interpreters, and every shell command runs there too (an unknown command fails the
test, so the guide can only show commands that work). ``docs/cli.md`` and
``docs/compatibility.md`` are checked against the code they describe.

The README's Python runs and prints what its comments say, its plugin ``pyproject.toml``
is a first-party plugin's, its callable table gives the constructors' real signatures,
its CI snippet uses options the command line has, and it stays a first page. Every
environment variable the package, the tests or CI read is documented, and every relative
link of the documents resolves. (Its install and set-up commands run in
``tests/test_install_commands.py``.)
"""

from __future__ import annotations

import inspect
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
import venv
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.parser import Parser
from importlib.metadata import version
from pathlib import Path
from typing import Any, get_args

import pytest
from packaging.requirements import Requirement

from .tilelang_env import session_wheels

try:
    import tomllib
except ImportError:  # Python 3.10: the same parser, published as tomli
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "authoring.md"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```$", re.DOTALL | re.MULTILINE)
FILE_MARK = re.compile(r"^# file: (\S+)\n")


@dataclass(frozen=True)
class Block:
    lang: str
    text: str
    line: int

    @property
    def file(self) -> str | None:
        match = FILE_MARK.match(self.text)
        return match[1] if match else None


def _blocks(path: Path) -> list[Block]:
    text = path.read_text(encoding="utf-8")
    return [Block(m[1], m[2], text.count("\n", 0, m.start()) + 1) for m in FENCE.finditer(text)]


BLOCKS = _blocks(GUIDE)


def test_the_guide_has_every_kind_of_block() -> None:
    langs = {b.lang for b in BLOCKS}
    assert langs == {"python", "toml", "bash"}, langs
    assert sum(b.file is not None for b in BLOCKS) >= 5
    text = GUIDE.read_text(encoding="utf-8")
    for needle in ("HostCodegenFunc(mod, target_host) -> runtime Module",
                   "HostCodegenHookFunc(mod, target_host, target) -> IRModule",
                   "TargetPredicate(target) -> bool", "priority", "apache-tvm", "tilelang",
                   "check_plugin", "hostcg_registry", "--no-build-isolation"):
        assert needle in text, needle


class GuideEnv:
    """A plain virtual environment the guide's commands run in, as a user's shell runs
    them: ``pip`` is its own, the index is reached, and nothing of the test run leaks
    in (``environ`` is the environment's own, e.g. :meth:`TileLangEnv.environ`)."""

    def __init__(self, path: Path, environ: Callable[[dict[str, str] | None], dict[str, str]]
                 ) -> None:
        self.path = path
        self.python = str(path / "bin" / "python")
        self._environ = environ

    def environ(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        return self._environ(dict(extra or {}))

    def run(self, *argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([self.python, *argv], capture_output=True, text=True,
                              env=self.environ(), cwd=cwd, timeout=900)

    def pip(self, *args: str) -> str:
        proc = self.run("-m", "pip", "--disable-pip-version-check", "--no-input", *args)
        assert proc.returncode == 0, f"pip {args} failed:\n{proc.stdout}\n{proc.stderr}"
        return proc.stdout

    def installed(self) -> dict[str, str]:
        """Installed distributions: normalized name -> version (``pip list``)."""
        listed = json.loads(self.pip("list", "--format", "json"))
        return {item["name"].lower().replace("_", "-"): item["version"] for item in listed}

    def command(self, *argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return self.run("-m", "tilelang_hostcg", *argv, cwd=cwd)

    def python_run(self, code: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return self.run("-c", textwrap.dedent(code), cwd=cwd)


def own_environ(path: Path) -> Callable[[dict[str, str] | None], dict[str, str]]:
    """The process environment of a venv at ``path``: this run's controls, paths and
    caches left out (pip's own cache stays, so a second run downloads nothing)."""

    def environ(extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("TILELANG_") and k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env.update(VIRTUAL_ENV=str(path), XDG_CACHE_HOME=str(path / "xdg-cache"),
                   PATH=f"{path / 'bin'}{os.pathsep}{env.get('PATH', '')}")
        env.update(extra or {})
        return env

    return environ


@dataclass
class Plugin:
    env: GuideEnv
    folder: Path


def write_the_guides_plugin(root: Path) -> Path:
    """The guide's plugin in ``root/acme-hostcg``, and beside it ``root/tilelang-hostcg``,
    the project's checkout, where the guide installs the core from."""
    folder = root / "acme-hostcg"
    for block in BLOCKS:
        if block.file is not None:
            target = folder / block.file
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.text, encoding="utf-8")
    (root / "tilelang-hostcg").symlink_to(ROOT, target_is_directory=True)
    return folder


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> Plugin:
    """The guide's plugin and a fresh venv whose TVM is apache-tvm's (the release the
    tests run with), with the project installed as in the TileLang environments (its
    wheel) and the first-party plugins the README's main job installs (so the guide's
    blocks hold beside them): the guide's first blocks run before its install commands."""
    root = tmp_path_factory.mktemp("guide")
    path = root / "venv"
    venv.EnvBuilder(with_pip=True).create(path)
    env = GuideEnv(path, own_environ(path))
    wheels = session_wheels(tmp_path_factory)
    env.pip("install", "-q", f"apache-tvm=={version('apache-tvm')}", str(wheels.project),
            *(str(wheels[name]) for name in MAIN_JOB_PLUGINS))
    return Plugin(env, write_the_guides_plugin(root))


MAIN_JOB_PLUGINS = ("tilelang-hostcg-cuda", "tilelang-hostcg-rocm", "tilelang-hostcg-template")


def _run_shell_line(plugin: Plugin, line: str) -> subprocess.CompletedProcess[str]:
    argv = shlex.split(line)
    env, folder = plugin.env, plugin.folder
    if argv[0] == "pip":  # as written: the environment's pip, dependencies from the index
        return env.run("-m", "pip", "--disable-pip-version-check", *argv[1:], cwd=folder)
    if argv[0] == "tilelang-hostcg":
        return env.command(*argv[1:], cwd=folder)
    if argv[:3] == ["python", "-m", "pytest"]:
        return env.run(*argv[1:], "-p", "no:cacheprovider", cwd=folder)
    if argv[:4] == ["python", "-m", "pip", "wheel"]:
        return env.run(*argv[1:], cwd=folder)
    raise AssertionError(f"docs/authoring.md shows a command the tests cannot run: {line!r}")


def run_the_guide(plugin: Plugin) -> None:
    """Every block of the guide, in order. Its install commands (the block with ``pip
    install -e .``) change nothing but the plugin and the core; ``pip check`` stays clean
    to the end (later blocks install the tools they use: pytest, setuptools)."""
    before = after = plugin.env.installed()
    # The plugin's pyproject.toml is the guide's first TOML block, exactly.
    (pyproject,) = [b for b in BLOCKS if b.file == "pyproject.toml"]
    meta = tomllib.loads(pyproject.text)
    assert meta["project"]["entry-points"]["tilelang.host_codegen"] == {
        "c": "acme_hostcg.codegen"}
    assert not [r for r in meta["project"]["dependencies"] if r.startswith("apache-tvm")]
    for block in BLOCKS:
        where = f"docs/authoring.md line {block.line}"
        if block.lang == "python" and block.file is None:
            proc = plugin.env.python_run(block.text, cwd=plugin.folder)
            assert proc.returncode == 0, f"{where}:\n{proc.stdout}\n{proc.stderr}"
        elif block.lang == "toml" and block.file is None:
            _build_with_project_table(plugin, pyproject.text, block.text, where)
        elif block.lang == "bash":
            for line in block.text.splitlines():
                if line.strip() and not line.lstrip().startswith("#"):
                    proc = _run_shell_line(plugin, line)
                    assert proc.returncode == 0, f"{where}: {line}\n{proc.stdout}\n{proc.stderr}"
                    if line.startswith("tilelang-hostcg list"):
                        assert "acme-hostcg 1.0.0  c = acme_hostcg.codegen" in proc.stdout
                    if line.startswith("tilelang-hostcg explain"):
                        assert "codegen:  'acme-c-cortexm' from acme-hostcg 1.0.0" in proc.stdout
                    if line.startswith("python -m pytest"):
                        assert "2 passed" in proc.stdout, proc.stdout
            if "pip install -e .\n" in block.text:
                after = plugin.env.installed()
    (wheel,) = (plugin.folder / "dist").glob("acme_hostcg-1.0.0-*.whl")
    twine = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(wheel)],
                           capture_output=True, text=True)  # the upload check, warnings fail
    assert twine.returncode == 0, twine.stdout + twine.stderr
    assert after["acme-hostcg"] == "1.0.0" and "tilelang-hostcg" in after
    changed = {name: (before.get(name), after.get(name)) for name in before.keys() | after.keys()
               if before.get(name) != after.get(name)}
    assert set(changed) <= {"acme-hostcg", "tilelang-hostcg"}, changed
    assert "No broken requirements found." in plugin.env.pip("check")


@pytest.mark.slow
def test_every_block_of_the_guide_runs(plugin: Plugin) -> None:
    run_the_guide(plugin)
    proc = plugin.env.python_run("import tvm; print(tvm.__version__)")
    assert proc.returncode == 0 and proc.stdout.startswith("0.27"), proc.stdout + proc.stderr


def _build_with_project_table(plugin: Plugin, pyproject: str, fragment: str, where: str) -> None:
    """A TOML fragment of the guide replaces the plugin's ``[project]`` fields it names;
    the result must still build."""
    meta, extra = tomllib.loads(pyproject), tomllib.loads(fragment)
    assert set(extra) == {"project"}, where
    assert extra["project"]["name"] == meta["project"]["name"], where
    variant = plugin.folder.parent / "acme-variant"
    shutil.copytree(plugin.folder, variant, ignore=shutil.ignore_patterns("dist", "*.egg-info"))
    (variant / "pyproject.toml").write_text(_merge(meta, extra["project"]))
    proc = plugin.env.run("-m", "pip", "wheel", "-q", "--no-deps", "-w", str(variant / "wheels"),
                          str(variant))
    assert proc.returncode == 0, f"{where}:\n{proc.stdout}\n{proc.stderr}"
    (wheel,) = (variant / "wheels").glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = archive.read(name).decode()
    declared = {str(Requirement(line)) for line in Parser().parsestr(metadata).get_all(
        "Requires-Dist", [])}
    for requirement in extra["project"].get("dependencies", []):
        assert str(Requirement(requirement)) in declared, (where, declared)
    for extra_name, requirements in extra["project"].get("optional-dependencies", {}).items():
        for requirement in requirements:
            wanted = Requirement(f'{requirement}; extra == "{extra_name}"')
            assert str(wanted) in declared, (where, declared)


def _merge(meta: dict[str, Any], project: dict[str, Any]) -> str:
    """The TOML of ``meta`` with its ``[project]`` fields replaced by ``project``'s."""
    merged = {**meta["project"], **project}
    out = ["[build-system]", *(f"{k} = {json.dumps(v)}" for k, v in meta["build-system"].items()),
           "[project]", *(f"{k} = {json.dumps(v)}" for k, v in merged.items()
                          if not isinstance(v, dict))]
    for key, table in merged.items():
        if key == "entry-points":
            for group, items in table.items():
                out.append(f"[project.entry-points.{json.dumps(group)}]")
                out += [f"{json.dumps(k)} = {json.dumps(v)}" for k, v in items.items()]
        elif isinstance(table, dict):
            out.append(f"[project.{key}]")
            out += [f"{json.dumps(k)} = {json.dumps(v)}" for k, v in table.items()]
    out += ["[tool.setuptools]",
            *(f"{k} = {json.dumps(v)}" for k, v in meta["tool"]["setuptools"].items())]
    return "\n".join(out) + "\n"


def test_cli_doc_lists_every_problem_code_check_emits() -> None:
    from tilelang_hostcg.cli import _checks

    emitted = set()
    for check in _checks._CHECKS:
        emitted |= set(re.findall(r"``([a-z-]+)``", (check.__doc__ or "").split(":")[0]))
    emitted.add("plugin-warning")
    table = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `([a-z-]+)` \| (?:error|warning) \|", table, re.MULTILINE))
    assert emitted == documented


def test_compatibility_doc_covers_the_whole_api() -> None:
    text = (ROOT / "docs" / "compatibility.md").read_text(encoding="utf-8")
    for name in ("HostCodegen", "HostCodegenHook", "global_func_host_codegen",
                 "register_host_codegen", "register_lazy_host_codegen",
                 "register_host_codegen_hook", "register_lazy_host_codegen_hooks",
                 "allowed_host_codegens_for_target", "apply_host_codegen_hooks",
                 "resolve_host_codegen", "HostCodegenFunc", "HostCodegenHookFunc",
                 "TargetPredicate"):
        assert f"`{name}" in text, name
    for difference in ("priority", "predicate that raises", "device target", "kind aliases",
                       "override=True", "one lazy module per kind", "at every call",
                       "No host codegen registered for target host '<kind>'. Available:",
                       "returns something other than `True`/`False`", "registers nothing",
                       "none of its registrations stay", "not retried until `refresh()`",
                       "registered by a lazy module while it loads", "kinds a plugin may register",
                       "cached per target", "a default serves only when no other codegen",
                       "PluginCallbackError", "hooks whose providers all failed",
                       "goes on with what to do next", "a dict or JSON text"):
        assert difference in text, difference


CONSOLE = re.compile(r"^```console\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def test_the_tilelang_environment_recipes_are_the_tests_own_and_leave_the_checkout_clean() -> None:
    """``docs/tilelang.md``'s recipe for a TileLang environment (which ``docs/gpu.md`` follows)
    installs torch's CPU build before TileLang, as the TileLang environments of the tests are
    made, and every folder the recipes create is one the checkout's ``.gitignore`` ignores."""
    from .tilelang_env import TORCH

    for name in ("docs/tilelang.md", "docs/gpu.md"):
        text = (ROOT / name).read_text(encoding="utf-8")
        lines = [shlex.split(line, comments=True) for block in CONSOLE.findall(text)
                 for line in block.replace("\\\n", " ").splitlines()]
        installs = [argv for argv in lines if argv and argv[0].endswith("/pip") and argv[1] == "install"]
        assert [argv[2:] for argv in installs[:2]] == [[TORCH], ["tilelang==0.1.15"]], (name, installs)
        made = [argv[-1] for argv in lines if argv[1:3] == ["-m", "venv"]]
        made += [argv[argv.index(flag) + 1] for argv in lines for flag in ("--out", "-d") if flag in argv]
        assert made, name
        for folder in made:
            proc = subprocess.run(["git", "check-ignore", "-q", f"{folder.rstrip('/')}/x"], cwd=ROOT)
            assert proc.returncode == 0, f"{name}: {folder} is not ignored by .gitignore"


# ------------------------------------------------------------------------------ README
README = ROOT / "README.md"
DOCUMENTS = (README, ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md")),
             *sorted((ROOT / "plugins").glob("*/README.md")))
PRINTS = re.compile(r"^print\(.*\)\s+# (.+)$", re.MULTILINE)


def _user_environ() -> dict[str, str]:
    """A user's shell: none of this run's controls or paths."""
    return {k: v for k, v in os.environ.items() if not k.startswith("TILELANG_") and k != "PYTHONPATH"}


def test_the_readme_is_a_first_page_and_the_changelog_release_notes() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 150
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert len(changelog.splitlines()) <= 80
    assert f"## Version {version('tilelang-hostcg')}\n" in changelog


def test_every_python_block_of_the_readme_runs_and_prints_what_it_says(tmp_path: Path) -> None:
    blocks = [b for b in _blocks(README) if b.lang == "python"]
    assert blocks, "the README shows no Python"
    for block in blocks:
        proc = subprocess.run([sys.executable, "-c", block.text], capture_output=True, text=True,
                              cwd=tmp_path, env=_user_environ(), timeout=300)
        assert proc.returncode == 0, f"README line {block.line}:\n{proc.stdout}\n{proc.stderr}"
        assert proc.stdout.splitlines() == PRINTS.findall(block.text), (block.line, proc.stdout)


def test_the_readmes_pyproject_is_a_first_party_plugins() -> None:
    (block,) = [b for b in _blocks(README) if b.lang == "toml"]
    shown = tomllib.loads(block.text)["project"]
    real = tomllib.loads((ROOT / "plugins" / "tilelang-hostcg-cuda" / "pyproject.toml").read_text())["project"]
    assert shown["dependencies"] == real["dependencies"]
    for group, entries in shown["entry-points"].items():
        assert entries.items() <= real["entry-points"][group].items(), group


def _constructor(cls: type) -> str:
    """``Name(a, b, c=None, *, d=())``, as the README's callable table writes it."""
    params, keyword_only = [], False
    for param in inspect.signature(cls).parameters.values():
        if param.kind is param.KEYWORD_ONLY and not keyword_only:
            params.append("*")
            keyword_only = True
        params.append(param.name if param.default is param.empty else f"{param.name}={param.default!r}")
    return f"{cls.__name__}({', '.join(params)})"


def test_the_readmes_callable_table_matches_the_code() -> None:
    import tilelang_hostcg as hostcg

    text = README.read_text(encoding="utf-8")
    for cls in (hostcg.HostCodegen, hostcg.HostCodegenHook):
        assert f"`{_constructor(cls)}`" in text, _constructor(cls)
    for alias, arity in (("HostCodegenFunc", 2), ("HostCodegenHookFunc", 3), ("TargetPredicate", 1)):
        row = re.search(rf"^\| `{alias}` \| `\w+\(([^)]*)\)", text, re.MULTILINE)
        assert row is not None, alias
        assert len(row[1].split(",")) == len(get_args(getattr(hostcg, alias))[0]) == arity, alias


def test_the_readmes_ci_snippet_uses_options_the_command_line_has() -> None:
    commands = [shlex.split(line.split("run:", 1)[1], comments=True)
                for b in _blocks(README) if b.lang == "yaml" for line in b.text.splitlines()
                if "run: tilelang-hostcg " in line]
    assert commands, "the README shows no tilelang-hostcg command for CI"
    for argv in commands:
        proc = subprocess.run([sys.executable, "-m", "tilelang_hostcg", argv[1], "--help"],
                              capture_output=True, text=True, env=_user_environ(), timeout=120)
        assert proc.returncode == 0, proc.stderr
        for option in (arg for arg in argv[2:] if arg.startswith("--")):
            assert re.search(rf"(?<![\w-]){option}(?![\w-])", proc.stdout), (option, proc.stdout)


def _variables(pattern: str, *paths: Path) -> set[str]:
    found: set[str] = set()
    for path in paths:
        for file in [path] if path.is_file() else sorted(path.rglob("*.py")):
            found |= set(re.findall(pattern, file.read_text(encoding="utf-8")))
    return found


def test_every_environment_variable_read_is_documented() -> None:
    user_docs = "".join(path.read_text(encoding="utf-8") for path in (README, *(ROOT / "docs").glob("*.md")))
    controls = _variables(r"\bTILELANG_HOSTCG_(?!TEST_)[A-Z][A-Z_]*[A-Z]\b",
                          ROOT / "tilelang_hostcg", ROOT / "_tilelang_hostcg_hook.py",
                          ROOT / "_tilelang_hostcg_switch.py")
    assert {"TILELANG_HOSTCG_DISABLE", "TILELANG_HOSTCG_AUTO_INSTALL"} <= controls, controls
    assert not [name for name in controls if not _mentions(user_docs, name)]
    # The README's table lists controls the package reads, and every one a user sets.
    table = set(re.findall(r"^\| `(TILELANG_HOSTCG_[A-Z_]+)=", README.read_text(encoding="utf-8"), re.MULTILINE))
    assert table <= controls and len(table) >= 5, table
    contributing = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    # The tests' own switches (read where the test environments and tools are set up) and CI's.
    readers = [ROOT / "tests" / name for name in ("conftest.py", "tilelang_env.py", "tvmsuite.py")]
    ours = _variables(r"\b(?:TILELANG_HOSTCG_TEST|CI)_[A-Z][A-Z_]*[A-Z]\b", *readers, ROOT / ".ci" / "run")
    assert {"TILELANG_HOSTCG_TEST_ENVS", "CI_PYTHONS"} <= ours, ours
    assert not [name for name in ours if not _mentions(contributing, name)]


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"\b{name}\b", text) is not None


def _slug(heading: str) -> str:
    """A Markdown heading's anchor, as GitHub makes it."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
PATH = re.compile(r"`((?:docs|examples|plugins|benchmarks|tests|\.ci)/[\w./-]*[\w/])`")


def test_every_relative_link_and_path_of_the_documents_resolves() -> None:
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        prose = FENCE.sub("", text)
        for target in LINK.findall(prose):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            path = (document.parent / file) if file else document
            assert path.exists(), f"{document.relative_to(ROOT)}: {target}"
            if anchor:
                headings = re.findall(r"^#+ (.+)$", FENCE.sub("", path.read_text(encoding="utf-8")), re.MULTILINE)
                assert anchor in {_slug(h) for h in headings}, f"{document.relative_to(ROOT)}: {target}"
        if document.parent == ROOT:  # the README, CONTRIBUTING, the CHANGELOG: paths of the checkout
            for name in PATH.findall(prose):
                assert (ROOT / name).exists(), f"{document.relative_to(ROOT)}: {name}"


def test_tvm_doc_shows_how_to_see_host_code_and_what_warnings_as_errors_do(tmp_path: Path) -> None:
    """``docs/tvm.md``'s block that shows the host code runs as written (with a kernel of
    ours as ``func``), and its section on warnings as errors says how to skip a plugin."""
    text = (ROOT / "docs" / "tvm.md").read_text()
    section = text.split("## Seeing the host code", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block is not None
    script = tmp_path / "see_host_code.py"
    script.write_text("import tvm\nfrom tests.kernels import vector_add as func\n" + block.group(1))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "define" in proc.stdout and "int32_t" in proc.stdout  # LLVM IR, then C source
    strict = text.split("**Where warnings are errors**", 1)[1].split("##", 1)[0]
    assert "TILELANG_HOSTCG_DISABLE=<its distribution>" in strict and "check --strict" in strict

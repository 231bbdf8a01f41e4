"""The documentation runs: every code block of ``docs/authoring.md`` is executed.

The guide's TOML is written as a real plugin's ``pyproject.toml``, its Python blocks
marked ``# file: PATH`` become that plugin's files, and the plugin is pip-installed
into a throwaway environment. Then the other Python blocks run there in fresh
interpreters, and every shell command runs there too (an unknown command fails the
test, so the guide can only show commands that work). ``docs/cli.md`` and
``docs/compatibility.md`` are checked against the code they describe.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tilelang_hostcg.testing import PluginEnvironment

from .conftest import Environments

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


@dataclass
class Plugin:
    env: PluginEnvironment
    folder: Path


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory, environments: Environments) -> Plugin:
    root = tmp_path_factory.mktemp("guide")
    folder = root / "acme-hostcg"
    for block in BLOCKS:
        if block.file is not None:
            target = folder / block.file
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.text, encoding="utf-8")
    return Plugin(environments.new("guide"), folder)


def _run_shell_line(plugin: Plugin, line: str) -> subprocess.CompletedProcess[str]:
    argv = shlex.split(line)
    env, folder = plugin.env, plugin.folder
    if argv[:2] == ["pip", "install"]:
        assert argv[2:] == ["-e", "."], line  # the only install the guide shows
        return env.pip("install", "-q", "--no-deps", "--no-build-isolation", "--no-index", "-e",
                       str(folder))
    if argv[0] == "tilelang-hostcg":
        return env.command(*argv[1:], cwd=folder)
    if argv[:3] == ["python", "-m", "pytest"]:
        return subprocess.run([env.python, *argv[1:], "-p", "no:cacheprovider"],
                              capture_output=True, text=True, env=env.environ(), cwd=folder,
                              timeout=600)
    if argv[:4] == ["python", "-m", "pip", "wheel"]:
        return subprocess.run([env.python, *argv[1:]], capture_output=True, text=True,
                              env=env.environ(), cwd=folder, timeout=600)
    raise AssertionError(f"docs/authoring.md shows a command the tests cannot run: {line!r}")


@pytest.mark.slow
def test_every_block_of_the_guide_runs(plugin: Plugin) -> None:
    # The plugin's pyproject.toml is the guide's first TOML block, exactly.
    (pyproject,) = [b for b in BLOCKS if b.file == "pyproject.toml"]
    meta = tomllib.loads(pyproject.text)
    assert meta["project"]["entry-points"]["tilelang.host_codegen"] == {
        "c": "acme_hostcg.codegen"}
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
    assert len(list((plugin.folder / "dist").glob("acme_hostcg-1.0.0-*.whl"))) == 1


def _build_with_project_table(plugin: Plugin, pyproject: str, fragment: str, where: str) -> None:
    """A TOML fragment of the guide replaces the plugin's ``[project]`` fields it names;
    the result must still build."""
    meta, extra = tomllib.loads(pyproject), tomllib.loads(fragment)
    assert set(extra) == {"project"}, where
    assert extra["project"]["name"] == meta["project"]["name"], where
    variant = plugin.folder.parent / "acme-variant"
    shutil.copytree(plugin.folder, variant, ignore=shutil.ignore_patterns("dist", "*.egg-info"))
    (variant / "pyproject.toml").write_text(_merge(meta, extra["project"]))
    proc = subprocess.run([plugin.env.python, "-m", "pip", "wheel", "-q", "--no-deps",
                           "--no-build-isolation", "-w", str(variant / "wheels"), str(variant)],
                          capture_output=True, text=True, env=plugin.env.environ())
    assert proc.returncode == 0, f"{where}:\n{proc.stdout}\n{proc.stderr}"
    (wheel,) = (variant / "wheels").glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = archive.read(name).decode()
    for extra_name, requirements in extra["project"].get("optional-dependencies", {}).items():
        for requirement in requirements:
            assert f"Requires-Dist: {requirement}; extra == \"{extra_name}\"" in metadata


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
    from tilelang_hostcg.cli import checks as _checks

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

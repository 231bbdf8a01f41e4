"""Nobody else's import finder is asked anything: the commands and the library find TileLang
and TVM on ``sys.path`` through the import system's own path finder, and where only another
tool's finder serves ``tilelang`` (as some editable installs do), they import it as a program
does (where ``import tvm`` alone finds no TVM), the import asking that finder once. Fresh
interpreters of the test environment (apache-tvm, no TileLang), a counting finder appended
to ``sys.meta_path`` as an editable install's is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tilelang_hostcg.environment._finding import find

pytestmark = pytest.mark.skipif(find("tilelang") is not None,
                                reason="this environment has a TileLang build of its own")

COUNTING = """
import importlib.util, json, os, sys
from collections import Counter

asked = Counter()


class Served:
    \"\"\"Another tool's finder: counts what it is asked; serves SERVED's ``tilelang`` when given.\"\"\"

    def find_spec(self, name, path=None, target=None):
        asked[name] += 1
        if name == "tilelang" and SERVED:
            init = os.path.join(SERVED, "tilelang", "__init__.py")
            return importlib.util.spec_from_file_location(
                "tilelang", init, submodule_search_locations=[os.path.dirname(init)])
        return None


sys.meta_path.append(Served())
"""


def _run(code: str, cwd: Path, served: Path | None = None) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TILELANG_HOSTCG_")}
    env.pop("PYTHONPATH", None)
    script = COUNTING.replace("SERVED", repr(str(served) if served else "")) + textwrap.dedent(code)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


COMMANDS = """
import contextlib, io
from tilelang_hostcg.cli import main

codes = {}
for argv in (["list", "--json"], ["list", "--load", "--json"], ["explain", "c", "--json"], ["check", "--json"]):
    with contextlib.redirect_stdout(io.StringIO()) as out:
        codes[" ".join(argv)] = main(argv)
    codes[" ".join(argv) + " tvm"] = json.loads(out.getvalue())["tvm"].get("provider")
print(json.dumps({"asked": asked, "codes": codes}))
"""


def test_the_commands_ask_another_tools_finder_nothing(tmp_path: Path) -> None:
    out = _run(COMMANDS, tmp_path)
    codes = out["codes"]
    assert isinstance(codes, dict)
    assert {argv: code for argv, code in codes.items() if not argv.endswith(" tvm")} == {
        "list --json": 0, "list --load --json": 0, "explain c --json": 0, "check --json": 0}, codes
    assert codes["check --json tvm"] == "apache-tvm", codes
    asked = out["asked"]
    assert isinstance(asked, dict)
    # TVM is on sys.path, so the import system's path finder answers `import tvm` and nobody asks
    # the finder after it; `tilelang` is on no path, and nothing asks that finder about it.
    assert asked.get("tvm", 0) == 0 and asked.get("tilelang", 0) == 0, asked


def test_the_library_asks_another_tools_finder_nothing(tmp_path: Path) -> None:
    out = _run("""
        import tilelang_hostcg
        name = tilelang_hostcg.resolve_host_codegen("llvm").name
        print(json.dumps({"asked": asked, "name": name, "tilelang": "tilelang" in sys.modules}))
    """, tmp_path)
    assert out["name"] == "llvm" and out["tilelang"] is False, out
    asked = out["asked"]
    assert isinstance(asked, dict) and asked.get("tvm", 0) == 0 and asked.get("tilelang", 0) == 0, asked


def test_a_tilelang_only_another_finder_serves_is_imported_where_tvm_alone_is_not_found(
        tmp_path: Path) -> None:
    # As TileLang bundles its TVM: `import tvm` finds none until `import tilelang` has run.
    served = tmp_path / "served"
    (served / "tilelang").mkdir(parents=True)
    (served / "tilelang" / "__init__.py").write_text("IMPORTED_BY = 'the import system'\n")
    (served / "tilelang" / "engine").mkdir()  # TileLang's layout (a stub without it is no TileLang)
    (served / "tilelang" / "engine" / "__init__.py").write_text("")
    (served / "tilelang" / "engine" / "lower.py").write_text("")
    out = _run("""
        class Bundled:
            def find_spec(self, name, path=None, target=None):
                if (name == "tvm" or name.startswith("tvm.")) and "tilelang" not in sys.modules:
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None


        sys.meta_path.insert(0, Bundled())
        from tilelang_hostcg.environment._finding import find, import_tvm
        tvm = import_tvm()
        found = find("tilelang")
        print(json.dumps({"asked": asked, "tvm": tvm.__name__,
                          "imported": getattr(sys.modules.get("tilelang"), "IMPORTED_BY", None),
                          "tree": found.tree if found else None}))
    """, tmp_path, served)
    assert out["tvm"] == "tvm" and out["imported"] == "the import system", out
    assert out["tree"] == os.path.realpath(served), out
    asked = out["asked"]
    assert isinstance(asked, dict) and asked["tilelang"] == 1, out  # by the import itself, once

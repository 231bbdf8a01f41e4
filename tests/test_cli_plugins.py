"""The command line against plugins that misbehave, really installed: one that prints to
stdout three ways and then fails (its traceback, file and line, and reinstall advice fitting
how it was installed), text with terminal controls in a plugin's names, error text and
metadata (shown escaped, kept exact in JSON), and codegens that cannot build with the TVM
in use (``list``, ``check --require`` and ``explain`` give one verdict).

Every test runs ``python -m tilelang_hostcg`` in a fresh process of one environment made
for this module; ``TILELANG_HOSTCG_ONLY`` picks the distributions a test sees.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tilelang_hostcg.testing import PluginEnvironment, write_distribution

from .conftest import Environments
from .plugin_factory import build_source_wheels

CG = "tilelang.host_codegen"
REQUIRES = ["tilelang-hostcg>=0.1,<1"]

# Terminal controls a plugin might slip into what we print: an escape sequence, BEL, CR,
# a C1 control (CSI) and a right-to-left override.
CONTROLS = "\x1b[2J\x07\r\x9b1m\u202e"
ESCAPED = "\\x1b[2J\\x07\\r\\x9b1m\\u202e"
RAW = ("\x1b", "\x07", "\r", "\x9b", "\u202e")
# In metadata, where a line break (CR too) ends the field.
META, META_ESCAPED = "\x1b[2J\x07\x9b1m\u202e", "\\x1b[2J\\x07\\x9b1m\\u202e"

LOUD = f'''\
import os, sys
print("loud: to sys.stdout")
sys.__stdout__.write("loud: to sys.__stdout__\\n")
os.write(1, b"loud: to fd 1\\n")


def find_driver():
    raise RuntimeError({"no driver " + CONTROLS!r})


find_driver()
'''


def _distributions(src: Path) -> dict[str, Path]:
    return {
        "hcg-loud": write_distribution(src, "hcg-loud", "1.0", requires=REQUIRES,
                                       entry_points={CG: {"cuda_host": "hcg_loud.codegen"}},
                                       files={"hcg_loud/__init__.py": "",
                                              "hcg_loud/codegen.py": LOUD}),
        "hcg-odd": write_distribution(src, "hcg-odd", "1.0", requires=REQUIRES,
                                      entry_points={CG: {"c": "hcg_odd:CODEGEN"}}, files={
            "hcg_odd/__init__.py": f"""
                from tilelang_hostcg import HostCodegen
                CODEGEN = HostCodegen({"odd" + CONTROLS!r}, lambda mod, target: mod, priority=5)
            """}),
        "hcg-nobuild": write_distribution(src, "hcg-nobuild", "1.0", requires=REQUIRES,
                                          entry_points={CG: {"cuda_host": "hcg_nobuild:CODEGEN",
                                                             "hcgkind": "hcg_nobuild:OTHER"}},
                                          files={"hcg_nobuild/__init__.py": """
                from tilelang_hostcg import HostCodegen, global_func_host_codegen
                CODEGEN = HostCodegen("nobuild", global_func_host_codegen(
                    "target.build.hcg_not_in_tvm"))
                OTHER = HostCodegen("other", lambda mod, target: mod)
            """}),
        "hcg-syntax": write_distribution(src, "hcg-syntax", "1.0", requires=REQUIRES,
                                         entry_points={CG: {"c": "hcg_syntax"}},
                                         files={"hcg_syntax/__init__.py": "x = 1\ndef broken(:\n"}),
        "hcg-editable": write_distribution(src, "hcg-editable", "1.0", requires=REQUIRES,
                                           entry_points={CG: {"cuda_host": "hcg_editable"}},
                                           files={"hcg_editable/__init__.py":
                                                  "import hcg_missing_dependency\n"}),
    }


@dataclass
class Installed:
    env: PluginEnvironment
    work: Path
    sources: dict[str, Path]
    wheels: dict[str, Path]

    def run(self, *argv: str, only: str,
            extra: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        variables = {"TILELANG_HOSTCG_ONLY": only, **(extra or {})}
        return self.env.command(*argv, env=variables, cwd=self.work)

    def json(self, *argv: str, only: str, expect: int = 0) -> Any:
        proc = self.run(*argv, "--json", only=only)
        assert proc.returncode == expect, proc.stdout + proc.stderr
        return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory, environments: Environments) -> Installed:
    root = tmp_path_factory.mktemp("cli-plugins")
    env = environments.new("cli-plugins")
    sources = _distributions(root / "src")
    built = build_source_wheels(root / "wheels", [sources[name] for name in
                                                  ("hcg-loud", "hcg-odd", "hcg-nobuild", "hcg-syntax")])
    wheels = {path.name.split("-")[0].replace("_", "-"): path for path in built}
    env.pip("install", "-q", "--no-deps", "--no-index", *map(str, built))
    env.pip("install", "-q", "--no-deps", "--no-index", "--no-build-isolation", "-e",
            str(sources["hcg-editable"]))
    work = root / "work"
    work.mkdir()
    return Installed(env, work, sources, wheels)


def _clean(text: str) -> None:
    """No terminal control from a plugin reached the text."""
    assert not any(char in text for char in RAW), repr(text)


# ------------------------------------------------------------ one document on stdout
@pytest.mark.parametrize("argv", [("list", "--load", "--json"), ("check", "--json"),
                                  ("explain", "cuda_host", "--json"), ("lock",)])
def test_what_plugins_print_never_reaches_the_document(installed: Installed,
                                                       argv: tuple[str, ...]) -> None:
    proc = installed.run(*argv, only="hcg-loud,hcg-nobuild")
    json.loads(proc.stdout)  # the whole of stdout is one document
    for line in ("loud: to sys.stdout", "loud: to sys.__stdout__", "loud: to fd 1"):
        assert line not in proc.stdout
        assert line in proc.stderr, (argv, proc.stderr)


TVM_GUESSES = ("Unable to detect CUDA version", "ROCm not detected", "Unable to detect ROCm version")


def test_tvms_cuda_and_rocm_arch_guesses_stay_off_the_output(installed: Installed) -> None:
    """TVM's own notes on a CUDA or ROCm target made without that GPU (its guesses of the architecture
    and of the toolkit's version) are left out of every command's output, ``check``'s and
    ``explain``'s as the others'."""
    for argv in (("explain", "cuda"), ("explain", "rocm", "--host", "llvm"), ("explain", "rocm", "--json"),
                 ("check",), ("check", "--json"), ("check", "--require-hook", "rocm"), ("list", "--load")):
        proc = installed.run(*argv, only="hcg-nobuild")
        assert not [g for g in TVM_GUESSES if g in proc.stderr + proc.stdout], (argv, proc.stderr)
    proc = installed.env.python_run("from tvm.target import Target; Target('cuda'); Target('rocm')")
    assert all(g in proc.stdout + proc.stderr for g in TVM_GUESSES), proc.stdout + proc.stderr  # TVM prints them


# ------------------------------------------------------------ plugins you can debug
def test_check_traceback_shows_the_plugins_own_frames(installed: Installed) -> None:
    plugin_file = str(installed.env.site_packages / "hcg_loud" / "codegen.py")
    proc = installed.run("check", "--traceback", only="hcg-loud")
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    start = lines.index("    Traceback (most recent call last):")
    traceback = lines[start:start + 6]
    assert traceback[1:] == [
        f'      File "{plugin_file}", line 11, in <module>',
        "        find_driver()",
        f'      File "{plugin_file}", line 8, in find_driver',
        f"        raise RuntimeError({'no driver ' + CONTROLS!r})",  # the source, as written
        f"    RuntimeError: no driver {ESCAPED}",
    ]
    assert "tilelang_hostcg" not in "\n".join(traceback) and "importlib" not in "\n".join(traceback)
    assert f"(at {plugin_file}:8)" in proc.stdout
    assert "Traceback" not in installed.run("check", only="hcg-loud").stdout  # only when asked

    doc = installed.json("check", only="hcg-loud", expect=1)
    (broken,) = [p for p in doc["problems"] if p["code"] == "broken"]
    assert broken["traceback"][0] == "Traceback (most recent call last):"
    assert broken["traceback"][-1] == f"RuntimeError: no driver {CONTROLS}"  # exact in JSON


def test_list_load_traceback_and_json_site(installed: Installed) -> None:
    plugin_file = str(installed.env.site_packages / "hcg_loud" / "codegen.py")
    proc = installed.run("list", "--load", "--traceback", only="hcg-loud")
    assert proc.returncode == 0, proc.stderr
    assert f'          File "{plugin_file}", line 8, in find_driver' in proc.stdout
    doc = installed.json("list", "--load", only="hcg-loud")
    (entry,) = [e for k in doc["codegens"] if k["kind"] == "cuda_host" for e in k["entry_points"]
                if e["distribution"] == "hcg-loud"]
    assert entry["error"] == {"type": "RuntimeError", "message": "no driver " + CONTROLS,
                              "file": plugin_file, "line": 8, "wrong_entry_point": None}
    assert entry["traceback"][-1] == "RuntimeError: no driver " + CONTROLS
    usage = installed.run("list", "--traceback", only="hcg-loud")
    assert usage.returncode == 2 and "add --load" in usage.stderr


def test_the_warning_names_the_plugin_file_and_line_escaped(installed: Installed) -> None:
    plugin_file = str(installed.env.site_packages / "hcg_loud" / "codegen.py")
    proc = installed.env.python_run("""
        import tilelang_hostcg as hc
        from tvm.target import Target
        hc.allowed_host_codegens_for_target(Target("cuda_host"))
    """, env={"TILELANG_HOSTCG_ONLY": "hcg-loud,hcg-nobuild", "PYTHONWARNINGS": "always"})
    assert proc.returncode == 0, proc.stderr
    (warning,) = [line for line in proc.stderr.splitlines() if "PluginWarning" in line]
    assert f"RuntimeError: no driver {ESCAPED} (at {plugin_file}:8)" in warning
    _clean(proc.stderr.replace("loud: to", ""))


def test_check_json_gives_the_file_and_line_of_a_failed_import(installed: Installed) -> None:
    """A CI job annotating the failing file reads ``file`` and ``line`` of ``check --json``'s
    problem, as ``list --load --json`` gives them: an import error, a ``SyntaxError``."""
    only = "hcg-editable,hcg-syntax"
    doc = installed.json("check", only=only, expect=1)
    sites = {p["distribution"]: (p["file"], p["line"]) for p in doc["problems"] if p["code"] == "broken"}
    listed = installed.json("list", "--load", only=only)
    from_list = {e["distribution"]: (e["error"]["file"], e["error"]["line"]) for k in listed["codegens"]
                 for e in k["entry_points"] if e["state"] == "broken"}
    assert sites == from_list
    assert sites["hcg-editable"] == (str(installed.sources["hcg-editable"] / "hcg_editable" / "__init__.py"), 1)
    file, line = sites["hcg-syntax"]
    assert file.endswith("hcg_syntax/__init__.py") and line == 2
    assert all(p["file"] is None and p["line"] is None for p in doc["problems"] if p["code"] != "broken")


def test_reinstall_advice_fits_the_installation(installed: Installed) -> None:
    doc = installed.json("check", only="hcg-loud,hcg-editable", expect=1)
    advice = {p["distribution"]: p["message"] for p in doc["problems"] if p["code"] == "broken"}
    assert f"pip install --no-deps -e '{installed.sources['hcg-editable']}'" in advice["hcg-editable"]
    wheel = installed.wheels["hcg-loud"]
    assert f"pip install --force-reinstall --no-deps '{wheel}'" in advice["hcg-loud"]
    plugin_file = installed.sources["hcg-editable"] / "hcg_editable" / "__init__.py"
    assert f"(at {plugin_file}:1)" in advice["hcg-editable"]  # its import of a missing module


# ------------------------------------------------------------ text is shown, not interpreted
def _metadata_folder(root: Path) -> Path:
    """A distribution whose version carries terminal controls (an installer would refuse
    it; a hand-made metadata folder on ``sys.path`` is seen all the same)."""
    info = root / "hcg_meta-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: hcg-meta\nVersion: 1.0{META}\n"
                                   "Requires-Dist: tilelang-hostcg\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[{CG}]\nc = hcg_meta:CODEGEN\n")
    (root / "hcg_meta.py").write_text(textwrap.dedent("""
        from tilelang_hostcg import HostCodegen
        CODEGEN = HostCodegen("meta", lambda mod, target: mod, priority=-1)
    """))
    return root


def test_plugin_text_is_escaped_in_every_text_output(installed: Installed, tmp_path: Path) -> None:
    extra = {"PYTHONPATH": str(_metadata_folder(tmp_path))}
    only = "hcg-loud,hcg-odd,hcg-meta"
    runs = {argv: installed.run(*argv, only=only, extra=extra) for argv in
            (("check",), ("list", "--load"), ("explain", "c"), ("list",))}
    for argv, proc in runs.items():
        _clean(proc.stdout)
        _clean(proc.stderr.replace("loud: to", ""))
        if argv != ("check",):  # check names versions only in its problems
            assert f"1.0{META_ESCAPED}" in proc.stdout, argv  # the metadata's version
    assert f"'odd{ESCAPED}'" in runs["explain", "c"].stdout  # the codegen's name
    assert f"'odd{ESCAPED}'" in runs["list", "--load"].stdout
    assert f"no driver {ESCAPED}" in runs["check",].stdout  # the plugin's error text

    proc = installed.run("explain", "c", "--json", only=only, extra=extra)
    doc = json.loads(proc.stdout)
    assert doc["codegen"]["name"] == "odd" + CONTROLS
    meta = next(c for c in doc["candidates"] if c["distribution"] == "hcg-meta")
    assert meta["version"] == "1.0" + META


# ------------------------------------------------------------ one rule for "can build"
def test_require_passes_exactly_when_explain_resolves(installed: Installed) -> None:
    for kind in ("c", "cuda_host", "hcgkind"):
        explained = installed.run("explain", kind, only="hcg-nobuild")
        required = installed.json("check", "--require", kind, only="hcg-nobuild", expect=1)
        missing = [p for p in required["problems"] if p["code"] == "missing-codegen"]
        assert (explained.returncode == 0) is (missing == []), (kind, explained, missing)
    # Routed (the plugin activates the TVM integration), TVM's own default serves cuda_host,
    # as in a routed build; with activation off, nothing that can build does.
    routed = installed.json("explain", "cuda_host", only="hcg-nobuild")
    assert routed["codegen"]["name"] == "apache-tvm-cuda_host"
    off = {"TILELANG_HOSTCG_AUTO_INSTALL": "0"}
    proc = installed.run("check", "--require", "cuda_host,hcgkind", "--json", only="hcg-nobuild", extra=off)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    missing = {p["kind"]: p["message"] for p in json.loads(proc.stdout)["problems"]
               if p["code"] == "missing-codegen"}
    assert "apache-tvm" in missing["cuda_host"]  # the TVM in use
    assert "'target.build.hcg_not_in_tvm'" in missing["cuda_host"]
    assert "has no target kind 'hcgkind'" in missing["hcgkind"]
    assert installed.run("explain", "hcgkind", only="hcg-nobuild").returncode == 2


def test_list_shows_a_codegen_that_cannot_build(installed: Installed) -> None:
    proc = installed.run("list", "--load", only="hcg-nobuild")
    (line,) = [line for line in proc.stdout.splitlines() if "'nobuild'" in line]
    assert "cannot build with apache-tvm" in line and "'target.build.hcg_not_in_tvm'" in line
    doc = installed.json("list", "--load", only="hcg-nobuild")
    (reg,) = [r for k in doc["codegens"] if k["kind"] == "cuda_host" for r in k["registrations"]
              if r["name"] == "nobuild"]
    assert reg["buildable"] is False and reg["cannot_build"] in line
    explained = installed.json("explain", "cuda_host", only="hcg-nobuild")  # TVM's default serves
    (cand,) = [c for c in explained["candidates"] if c["distribution"] == "hcg-nobuild"]
    assert cand["buildable"] is False and cand["reason"].endswith(reg["cannot_build"])

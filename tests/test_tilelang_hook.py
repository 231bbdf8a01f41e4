"""The start-up hook without TileLang: what it costs a process that never imports
TileLang, and what it does on ``import tilelang`` when that is not TileLang's
distribution (a folder named ``tilelang``). Fresh interpreters of the test environment,
where the package (and so ``tilelang_hostcg_hook.pth``) is installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from tilelang_hostcg.testing import PluginEnvironment

from .plugin_factory import Plugin, codegen_module, install
from .tilelang_env import session_wheels

HEAVY = ["tvm", "tvm_ffi", "importlib.metadata", "importlib_metadata", "packaging", "tilelang",
         "tilelang_hostcg"]  # the package itself: none of its modules either

REPORT = """
import json, sys
print(json.dumps({
    "hook": [type(f).__module__ for f in sys.meta_path if type(f).__module__ == "_tilelang_hostcg_hook"],
    "ours": sorted(m for m in sys.modules if m.startswith("tilelang_hostcg")),
    "installed": ("tilelang_hostcg.tilelang" in sys.modules
                  and sys.modules["tilelang_hostcg.tilelang"].is_installed()),
    "loader": type(tilelang.__loader__).__name__ if "tilelang" in sys.modules else None,
    "spec_loader": tilelang.__spec__.loader is tilelang.__loader__ if "tilelang" in sys.modules else None,
}))
"""


def run(code: str, cwd: Path, python: str = sys.executable, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TILELANG_HOSTCG_")}
    environ.update(env)
    return subprocess.run([python, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          cwd=cwd, env=environ, timeout=120)


@pytest.fixture
def fake_tilelang(tmp_path: Path) -> Path:
    """A folder holding a package named ``tilelang`` that is not TileLang's distribution."""
    (tmp_path / "tilelang").mkdir()
    (tmp_path / "tilelang" / "__init__.py").write_text("VALUE = 42\n")
    return tmp_path


def test_a_process_that_never_imports_tilelang_imports_nothing_of_ours(tmp_path):
    proc = run(f"import json, sys; print(json.dumps([type(sys.meta_path[0]).__module__, "
               f"[type(f).__module__ for f in sys.meta_path].count('_tilelang_hostcg_hook'), "
               f"[m for m in {HEAVY!r} if m in sys.modules]]))", tmp_path)
    assert proc.returncode == 0, proc.stderr
    first, count, heavy = json.loads(proc.stdout)
    assert first == "_tilelang_hostcg_hook" and count == 1  # installed, once, first on sys.meta_path
    assert heavy == []
    assert proc.stderr == ""


def test_another_package_named_tilelang_is_left_alone(fake_tilelang):
    proc = run("import tilelang\n" + REPORT, fake_tilelang)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    out = json.loads(proc.stdout)
    assert out["hook"] == []  # the finder left sys.meta_path
    assert out["loader"] == "SourceFileLoader" and out["spec_loader"]  # its own loader back
    assert out["installed"] is False  # and nothing installed


def test_the_off_switch_imports_nothing_of_ours(fake_tilelang):
    for value in ("0", "off", " FALSE "):
        proc = run("import tilelang\n" + REPORT, fake_tilelang, TILELANG_HOSTCG_AUTO_INSTALL=value)
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
        out = json.loads(proc.stdout)
        assert out["ours"] == [] and out["hook"] == [], (value, out)


def test_a_value_not_understood_warns_at_the_import_line(fake_tilelang):
    proc = run("import warnings\nwarnings.simplefilter('always')\nimport tilelang\n" + REPORT,
               fake_tilelang, TILELANG_HOSTCG_AUTO_INSTALL="maybe")
    assert proc.returncode == 0, proc.stderr
    assert "<string>:3: ControlPluginWarning: TILELANG_HOSTCG_AUTO_INSTALL='maybe' is not understood" in proc.stderr
    assert "TILELANG_HOSTCG_AUTO_INSTALL=0 to turn it off" in proc.stderr
    # Discovery, which activation runs, judges the variable by the same rule: one warning.
    assert proc.stderr.count("is not understood") == 1, proc.stderr


def test_a_failing_import_of_tilelang_fails_as_it_would_and_the_retry_activates(fake_tilelang):
    (fake_tilelang / "tilelang" / "__init__.py").write_text(
        "import os\nif not os.path.exists('fixed'):\n    raise ImportError('broken on purpose')\n")
    proc = run(textwrap.dedent("""
        import json, pathlib, sys
        try:
            import tilelang
        except ImportError as exc:
            failed = repr(exc)
        hooked = [type(f).__module__ for f in sys.meta_path if type(f).__module__ == "_tilelang_hostcg_hook"]
        pathlib.Path("fixed").touch()
        import tilelang
        print(json.dumps([failed, hooked]))
    """) + REPORT, fake_tilelang)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    first, out = map(json.loads, proc.stdout.splitlines())
    assert first == ["ImportError('broken on purpose')", ["_tilelang_hostcg_hook"]]  # still in place
    assert out["hook"] == [] and out["loader"] == "SourceFileLoader"  # the retry took it off


def test_a_look_at_tilelang_is_not_an_import(fake_tilelang):
    """``importlib.util.find_spec`` and the command line's look at which TVM is in use (in
    the same process) leave the finder in place, and the later import takes it off."""
    proc = run(textwrap.dedent("""
        import contextlib, importlib.util, io, json, sys
        from tilelang_hostcg.cli import main

        spec = importlib.util.find_spec("tilelang")
        with contextlib.redirect_stdout(io.StringIO()):
            code = main(["list"])
        hooked = [type(f).__module__ for f in sys.meta_path if type(f).__module__ == "_tilelang_hostcg_hook"]
        print(json.dumps([spec.origin.endswith("__init__.py"), code, hooked, "tilelang" in sys.modules]))
        import tilelang
    """) + REPORT, fake_tilelang)
    # The look names what `import tilelang` would give (here a TileLang no distribution ships).
    assert proc.returncode == 0 and all(line.startswith("note: ") for line in proc.stderr.splitlines()), proc.stderr
    look, out = map(json.loads, proc.stdout.splitlines())
    assert look == [True, 0, ["_tilelang_hostcg_hook"], False]
    assert out["hook"] == [] and out["loader"] == "SourceFileLoader" and out["spec_loader"]


# What PEP 829's ``site`` (Python 3.15+) does with a site directory, as its documentation
# states it: ``.pth`` files in sorted order for their paths, skipping the ``import`` lines
# of a ``<name>.pth`` whose ``<name>.start`` exists (ALSO_PTH runs them anyway, as a site
# that processed both would), then each ``.start`` file's ``pkg.mod:callable`` entries,
# resolved by ``pkgutil.resolve_name`` and called.
PEP_829_SITE = """
import json, os, pkgutil, sys
site_dir = SITE
sys.path.append(site_dir)  # this interpreter runs with -S: nothing was processed yet
names = sorted(os.listdir(site_dir))
skipped, run = [], []
for name in names:
    if name.endswith(".pth"):
        for line in open(os.path.join(site_dir, name)).read().splitlines():
            if line.startswith(("import ", "import\t")):
                if name[:-4] + ".start" in names:
                    skipped.append(name)
                    if ALSO_PTH:
                        exec(line)
                else:
                    exec(line)
            elif line.strip() and not line.startswith("#"):
                sys.path.append(os.path.join(site_dir, line.strip()))
for name in names:
    if name.endswith(".start"):
        for line in open(os.path.join(site_dir, name)).read().splitlines():
            if line.strip() and not line.startswith("#"):
                pkgutil.resolve_name(line.strip())()
                run.append(line.strip())
finders = [type(f).__module__ for f in sys.meta_path if type(f).__module__ == "_tilelang_hostcg_hook"]
import tilelang_hostcg.tilelang._activation as activation
calls = []
stock = activation.activate
activation.activate = lambda: (calls.append(1), stock())[1]
import tilelang
print(json.dumps({"skipped": skipped, "run": run, "finders": finders, "calls": len(calls),
                  "left": [f for f in sys.meta_path if type(f).__module__ == "_tilelang_hostcg_hook"] == []}))
"""


@pytest.mark.parametrize("also_pth", [False, True], ids=["as-pep-829", "pth-line-too"])
def test_a_site_directory_processed_as_pep_829_says_starts_one_finder(fake_tilelang, also_pth):
    """The installed ``tilelang_hostcg_hook.start`` runs ``_tilelang_hostcg_hook:start``
    and the ``.pth`` line of the same name is skipped; were both run, still one finder.
    One activation: ``activate`` (wrapped here, an internal) runs once, at the import."""
    site_dir = next(p for p in sys.path if p.endswith("site-packages")
                    and os.path.exists(os.path.join(p, "tilelang_hostcg_hook.start")))
    code = PEP_829_SITE.replace("SITE", repr(site_dir)).replace("ALSO_PTH", repr(also_pth))
    proc = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True,
                          cwd=fake_tilelang, timeout=120,
                          env={k: v for k, v in os.environ.items() if not k.startswith("TILELANG_HOSTCG_")})
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    out = json.loads(proc.stdout)
    assert out["skipped"] == ["tilelang_hostcg_hook.pth"]
    assert out["run"] == ["_tilelang_hostcg_hook:start"]
    assert out["finders"] == ["_tilelang_hostcg_hook"]
    assert out["calls"] == 1 and out["left"]


@pytest.mark.slow
def test_with_a_plugin_but_no_tilelang_distribution_nothing_is_installed(fake_tilelang, tmp_path):
    env = PluginEnvironment(tmp_path / "venv")
    install(env, tmp_path, [Plugin("hook-plugin", codegens={"c": "hcgt_hook"},
                                   files={"hcgt_hook.py": codegen_module("c", "hook-c")})])
    proc = run("import warnings\nwarnings.simplefilter('error')\nimport tilelang\n" + REPORT,
               fake_tilelang, python=env.python)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    out = json.loads(proc.stdout)
    assert out["hook"] == [] and out["installed"] is False  # a plugin, but no TileLang: quiet


@pytest.mark.slow
def test_metadata_that_is_a_fifo_never_makes_import_tilelang_wait(fake_tilelang, tmp_path):
    """A leftover metadata folder beside the package whose ``top_level.txt`` and ``RECORD`` are FIFOs
    nobody writes: ``import tilelang`` (with a plugin installed) and the commands finish."""
    env = PluginEnvironment(tmp_path / "venv")
    install(env, tmp_path, [Plugin("hook-plugin", codegens={"c": "hcgt_hook"},
                                   files={"hcgt_hook.py": codegen_module("c", "hook-c")})])
    # TileLang's layout without its points: the folder is the TileLang in use (whose metadata is
    # checked), but no point is there, so activation leaves it alone.
    (fake_tilelang / "tilelang" / "engine").mkdir()
    (fake_tilelang / "tilelang" / "engine" / "__init__.py").write_text("")
    (fake_tilelang / "tilelang" / "engine" / "lower.py").write_text("")
    leftover = fake_tilelang / "tilelang_leftover-1.0.dist-info"
    leftover.mkdir()
    (leftover / "METADATA").write_text("Metadata-Version: 2.1\nName: tilelang-leftover\nVersion: 1.0\n")
    for name in ("top_level.txt", "RECORD"):
        os.mkfifo(leftover / name)
    proc = run("import tilelang\n" + REPORT, fake_tilelang, python=env.python)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert json.loads(proc.stdout)["installed"] is False  # not TileLang: no point, nothing ships it
    for argv in (["list"], ["check", "--json"]):
        proc = subprocess.run([env.python, "-m", "tilelang_hostcg", *argv], capture_output=True, text=True,
                              cwd=tmp_path, timeout=120, env={**os.environ, "PYTHONPATH": str(fake_tilelang)})
        assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr
    named = [p for p in json.loads(proc.stdout)["problems"] if p["code"] == "metadata-file"]
    assert sorted(p["message"].split(": its ")[1].split(" ")[0] for p in named) == ["RECORD", "top_level.txt"]
    assert all("is a FIFO, not a file" in p["message"] and str(leftover) in p["message"] for p in named)


@pytest.mark.slow
def test_the_wheel_ships_the_start_up_hook(tmp_path_factory):
    """The project's wheel (``pip wheel`` of the checkout) holds the hook module, the
    ``.pth`` file and the PEP 829 ``.start`` file at its root."""
    wheel = session_wheels(tmp_path_factory).project
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        start = archive.read("tilelang_hostcg_hook.start").decode()
        pth = archive.read("tilelang_hostcg_hook.pth").decode()
    assert {"_tilelang_hostcg_hook.py", "_tilelang_hostcg_switch.py", "tilelang_hostcg_hook.pth",
            "tilelang_hostcg_hook.start"} <= names
    assert start.split() == ["_tilelang_hostcg_hook:start"]
    assert pth.split("\n")[0] == "import _tilelang_hostcg_hook"


GONE_FILES = ("_tilelang_hostcg_hook.py", "_tilelang_hostcg_switch.py", "tilelang_hostcg_hook.pth",
              "tilelang_hostcg_hook.start")


@pytest.fixture(scope="module")
def package_gone(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """A virtual environment of its own (no layer over this one) where the project's wheel was installed
    by pip, then ``tilelang_hostcg/`` and its dist-info deleted by hand: the start-up hook is left."""
    import shutil
    import venv

    root = tmp_path_factory.mktemp("package-gone")
    venv.EnvBuilder(with_pip=False).create(root / "venv")
    python = str(root / "venv" / "bin" / "python")
    subprocess.run([sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps", "--no-index",
                    str(session_wheels(tmp_path_factory).project)], check=True, capture_output=True)
    site = Path(subprocess.run([python, "-c", "import site; print(site.getsitepackages()[0])"], check=True,
                               capture_output=True, text=True).stdout.strip())
    shutil.rmtree(site / "tilelang_hostcg")
    for info in site.glob("tilelang_hostcg-*.dist-info"):
        shutil.rmtree(info)
    assert all((site / name).exists() for name in GONE_FILES)
    return python, site


@pytest.mark.parametrize("flags", [(), ("-W", "error")])
def test_a_package_deleted_by_hand_warns_once_at_the_users_line_naming_the_off_switch(
        package_gone: tuple[str, Path], fake_tilelang: Path, flags: tuple[str, ...]) -> None:
    python, site = package_gone
    code = "x = 1\nimport tilelang\nimport sys; del sys.modules['tilelang']\nimport tilelang\nprint(tilelang.VALUE)\n"
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TILELANG_HOSTCG_") and k != "PYTHONPATH"}
    proc = subprocess.run([python, *flags, "-c", code], capture_output=True, text=True, cwd=fake_tilelang,
                          env=environ, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "42", proc.stdout + proc.stderr  # TileLang runs stock
    warnings = [line for line in proc.stderr.splitlines() if "Warning" in line]
    assert len(warnings) == 1, proc.stderr  # exactly one, for two imports
    assert warnings[0].startswith("<string>:2: UserWarning: tilelang-hostcg's start-up hook is installed but "
                                  "its package tilelang_hostcg cannot be imported"), proc.stderr
    assert "set TILELANG_HOSTCG_AUTO_INSTALL=0 to turn it off" in warnings[0], proc.stderr
    assert all(name in warnings[0] for name in GONE_FILES) and str(site) in warnings[0], proc.stderr
    off = subprocess.run([python, "-c", code], capture_output=True, text=True, cwd=fake_tilelang,
                         env={**environ, "TILELANG_HOSTCG_AUTO_INSTALL": "0"}, timeout=120)
    assert off.returncode == 0 and off.stderr == "", off.stderr  # the off switch still reads, and silences it

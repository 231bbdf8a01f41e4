"""Each first-party plugin (and the template) builds with exactly the build
requirements it declares: a fresh virtual environment gets the declared minimum
version of each requirement and nothing else, then ``pip wheel
--no-build-isolation --no-deps`` builds the plugin, as distro and offline builds do.

The environment has no ``pip`` of its own: the running one's drives it (``pip
--python``), which runs the build with the environment's interpreter.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

try:
    import tomllib
except ImportError:  # Python 3.10: the same parser, published as tomli
    import tomli as tomllib

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
PLUGINS = sorted(p for p in (ROOT / "plugins").iterdir() if (p / "pyproject.toml").exists())
MINIMUM = re.compile(r"^\s*([A-Za-z0-9._-]+)\s*>=\s*([0-9][0-9A-Za-z.]*)\s*$")


def _pyproject(plugin: Path) -> dict:  # type: ignore[type-arg]
    with open(plugin / "pyproject.toml", "rb") as stream:
        return tomllib.load(stream)


def _minimums(plugin: Path) -> tuple[str, ...]:
    """``name==minimum`` for each build requirement, which must be written ``name>=X``."""
    pins = []
    for requirement in _pyproject(plugin)["build-system"]["requires"]:
        match = MINIMUM.match(requirement)
        assert match, f"{plugin.name}: build requirement {requirement!r} declares no minimum"
        pins.append(f"{match[1]}=={match[2]}")
    return tuple(sorted(pins))


def test_every_plugin_is_found() -> None:
    assert {p.name for p in PLUGINS} >= {"tilelang-hostcg-cuda", "tilelang-hostcg-rocm",
                                         "tilelang-hostcg-template"}


# The first release of each build backend that reads an SPDX ``license = "..."`` string.
SPDX_MINIMUM = {"setuptools": (77, 0, 1), "hatchling": (1, 18)}


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.name)
def test_spdx_license_declares_a_backend_that_reads_it(plugin: Path) -> None:
    """Every plugin declares its licence as an SPDX ``license = "..."`` string (PEP 639)
    and a build backend release that reads it."""
    project = _pyproject(plugin)["project"]
    assert isinstance(project.get("license"), str), (
        f"{plugin.name}: declare the licence as an SPDX expression, license = \"Apache-2.0\" "
        f"(found {project.get('license')!r})")
    pins = dict(pin.split("==") for pin in _minimums(plugin))
    (backend,) = set(pins) & set(SPDX_MINIMUM)
    declared = tuple(int(part) for part in pins[backend].split("."))
    assert declared >= SPDX_MINIMUM[backend], (
        f"{plugin.name} uses an SPDX license string but declares {backend} {pins[backend]}")


def test_plugins_build_with_their_declared_minimums(tmp_path: Path) -> None:
    groups: dict[tuple[str, ...], list[Path]] = {}
    for plugin in PLUGINS:
        groups.setdefault(_minimums(plugin), []).append(plugin)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    for n, (pins, plugins) in enumerate(sorted(groups.items())):
        folder = tmp_path / f"build-{n}"
        venv.EnvBuilder(with_pip=False).create(folder / "venv")
        python = str(folder / "venv" / "bin" / "python")
        pip_list = [sys.executable, "-m", "pip", "--python", python,
                    "--disable-pip-version-check", "--no-input"]
        pip = [*pip_list, "-q"]
        subprocess.run([*pip, "install", *pins], check=True, capture_output=True, env=env)
        listed = subprocess.run([*pip_list, "list", "--format=freeze"], check=True,
                                capture_output=True, text=True, env=env).stdout
        for pin in pins:  # exactly the declared minimum, nothing newer
            assert pin.lower() in listed.lower(), listed
        wheels = folder / "wheels"
        proc = subprocess.run([*pip, "wheel", "--no-build-isolation", "--no-deps", "-w",
                               str(wheels), *map(str, plugins)], capture_output=True, text=True,
                              env=env)
        assert proc.returncode == 0, f"{pins}: {proc.stdout}\n{proc.stderr}"
        built = sorted(wheels.glob("*.whl"))
        assert len(built) == len(plugins), built
        for wheel in built:
            with zipfile.ZipFile(wheel) as archive:
                (meta,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
                text = archive.read(meta).decode()
            assert "License-Expression: Apache-2.0" in text, wheel.name

"""The TileLang versions the integration supports, and which of TileLang's APIs each has.

"Installed" means what ``importlib.metadata`` sees (the metadata of one of TileLang's
builds, :func:`tilelang_hostcg._tvm.tilelang_distribution`: stock ``tilelang``,
``tilelang-paddle``, ...), not whether something named ``tilelang`` happens to be
importable. Every build's version is judged alike: the builds ship the same ``tilelang``
package at the same version. Versions compare as PEP 440 says (``packaging``):
``0.1.12rc1`` comes before ``0.1.12``, so it is refused.
"""

from __future__ import annotations

from typing import Literal

from .._errors import UnsupportedTileLangError
from .._names import TILELANG
from .._tvm import distribution_name, tilelang_distribution

__all__ = ["SUPPORTED", "Mode", "UnsupportedTileLangError", "installed_build", "installed_tilelang",
           "mode_of", "tilelang_version"]

Mode = Literal["registry", "backend"]
"""Which of TileLang's APIs a version has (see :mod:`tilelang_hostcg.tilelang.modes`)."""

SUPPORTED = ">=0.1.12,<0.1.16"
"""The TileLang versions the integration supports (0.1.12 to 0.1.15)."""

_MODES: tuple[tuple[Mode, str], ...] = (
    # 0.1.12-0.1.13: ``tilelang.engine.lower`` imports the functions of
    # ``tilelang.backend.host_codegen`` by name.
    ("registry", ">=0.1.12,<0.1.14"),
    # 0.1.14-0.1.15: ``BackendModule.get_host_codegen`` / ``preprocess_host_codegen``.
    ("backend", ">=0.1.14,<0.1.16"),
)


def tilelang_version() -> str | None:
    """The installed TileLang's version (its distribution metadata, the rule of
    :func:`tilelang_hostcg._tvm.tilelang_distribution`), or ``None``."""
    dist = tilelang_distribution()
    return None if dist is None else str(dist.version)


def installed_build() -> tuple[str, str]:
    """The installed TileLang build's distribution name and version (``("tilelang-paddle",
    "0.1.13")``); :class:`UnsupportedTileLangError` when there is none."""
    dist = tilelang_distribution()
    if dist is None:
        raise UnsupportedTileLangError(
            f"TileLang is not installed; tilelang_hostcg.tilelang supports tilelang{SUPPORTED} "
            "(0.1.12 to 0.1.15, or PaddlePaddle's build tilelang-paddle of those versions): "
            "`pip install tilelang-hostcg[tilelang]`")
    return distribution_name(dist), str(dist.version)


def installed_tilelang() -> str:
    """The installed TileLang's version; :class:`UnsupportedTileLangError` when there is none."""
    return installed_build()[1]


def mode_of(version: str, distribution: str = TILELANG) -> Mode:
    """Which of TileLang's APIs ``version`` (of the build ``distribution``) has:
    ``"registry"`` (0.1.12-0.1.13) or ``"backend"`` (0.1.14-0.1.15). Pre-releases,
    post-releases and local versions count as PEP 440 orders them; any other version
    raises :class:`UnsupportedTileLangError`, naming the distribution and version."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        parsed: Version | None = Version(version)
    except InvalidVersion:
        parsed = None
    if parsed is not None:
        for mode, versions in _MODES:
            if SpecifierSet(versions).contains(parsed, prereleases=True):
                return mode
    raise UnsupportedTileLangError(
        f"TileLang {version} is not supported by tilelang_hostcg.tilelang (installed as "
        f"{distribution} {version}): it supports TileLang{SUPPORTED} (0.1.12 to 0.1.15, of "
        "the builds tilelang and tilelang-paddle). Install a supported TileLang "
        f"(`pip install '{distribution}>=0.1.12,<0.1.16'`), or use tilelang_hostcg.build() "
        "without the integration")

"""ROCm support for tilelang-hostcg: hooks for the ``hip``/``rocm`` device kind.

The distribution advertises ``hip = tilelang_hostcg_rocm.hooks:ROCM_HOOKS`` in
``tilelang.host_codegen_hooks``; ``tilelang_hostcg`` treats TileLang's ``hip`` and
TVM 0.27's ``rocm`` as one kind, so the hooks apply to ``Target("rocm")``.

Importing this package registers nothing and imports neither TVM nor the hooks;
the names below load on first access.
"""

from __future__ import annotations

__version__ = "0.1.0"

TYPE_CHECKING = False  # typing costs import time; type checkers treat this name as True

if TYPE_CHECKING:
    from ._errors import IncompatibleHostError, RocmArchError
    from ._target import (
        DEVICE_ATTR,
        ROCM_MTRIPLE,
        RocmDeviceInfo,
        normalize_rocm_arch,
        rocm_device_info,
        warp_size_for_arch,
    )

__all__ = [
    "DEVICE_ATTR",
    "ROCM_MTRIPLE",
    "IncompatibleHostError",
    "RocmArchError",
    "RocmDeviceInfo",
    "__version__",
    "normalize_rocm_arch",
    "rocm_device_info",
    "warp_size_for_arch",
]

_WHERE = {
    "_errors": ("IncompatibleHostError", "RocmArchError"),
    "_target": ("DEVICE_ATTR", "ROCM_MTRIPLE", "RocmDeviceInfo", "normalize_rocm_arch",
                "rocm_device_info", "warp_size_for_arch"),
}
_MODULE_OF = {name: module for module, names in _WHERE.items() for name in names}


def __getattr__(name: str) -> object:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'tilelang_hostcg_rocm' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)

"""ROCm target facts: architecture names, wavefront sizes, and the record on the host module.

The rules follow TileLang's ROCm backend (``tilelang/utils/target.py``): an
architecture is the ``gfx...`` part of ``mcpu`` (feature flags such as
``:sramecc+:xnack-`` follow a colon), the code-object triple is
``amdgcn-amd-amdhsa-hcc``, and the wavefront is 64 lanes on ``gfx9`` (CDNA, GCN) and
32 on ``gfx10``/``gfx11``/``gfx12`` (RDNA).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._errors import RocmArchError

if TYPE_CHECKING:
    from tvm.ir import IRModule
    from tvm.target import Target

__all__ = ["DEVICE_ATTR", "ROCM_MTRIPLE", "RocmDeviceInfo", "normalize_rocm_arch",
           "rocm_device_info", "warp_size_for_arch"]

ROCM_MTRIPLE = "amdgcn-amd-amdhsa-hcc"
"""The LLVM triple of ROCm code objects (TVM's and TileLang's default)."""

DEVICE_ATTR = "tilelang_hostcg_rocm.device"
"""Host ``IRModule`` attribute where the ``hip`` hooks record the device they launch on."""


def normalize_rocm_arch(mcpu: object) -> str | None:
    """The ``gfx...`` architecture in an ``mcpu`` value (``"gfx942:sramecc+:xnack-"`` ->
    ``"gfx942"``), or ``None`` when it names none."""
    if mcpu is None:
        return None
    arch = str(mcpu).strip().split(":", 1)[0]
    return arch if arch.startswith("gfx") and len(arch) > 3 else None


def warp_size_for_arch(arch: str | None) -> int | None:
    """The native wavefront size of an architecture: 64 for ``gfx9``, 32 for
    ``gfx10``-``gfx12``, ``None`` when unknown."""
    if arch is None:
        return None
    if arch.startswith("gfx9"):
        return 64
    if arch.startswith(("gfx10", "gfx11", "gfx12")):
        return 32
    return None


@dataclass(frozen=True, slots=True)
class RocmDeviceInfo:
    """The ROCm device a host module launches kernels on.

    ``arch`` (``gfx942``) and ``features`` (``sramecc+:xnack-``, may be empty) come from
    the target's ``mcpu``; ``warp_size`` is the target's ``thread_warp_size`` the kernels
    were compiled with, ``native_warp_size`` the architecture's own (``None``: unknown).
    A loader can compare ``arch`` with the GPU before it loads the code object.
    """

    arch: str
    features: str = ""
    mtriple: str = ROCM_MTRIPLE
    warp_size: int = 64
    native_warp_size: int | None = None

    @property
    def warp_size_mismatch(self) -> bool:
        """Whether the kernels' warp size differs from the architecture's native one
        (TVM 0.27 defaults to 64 for every ``mcpu``; TileLang uses 32 on RDNA)."""
        return self.native_warp_size is not None and self.native_warp_size != self.warp_size

    @classmethod
    def from_target(cls, target: Target) -> RocmDeviceInfo:
        """Read a ``rocm`` target; raises :class:`~tilelang_hostcg_rocm.RocmArchError`
        when its ``mcpu`` is not a ``gfx`` architecture."""
        mcpu = target.attrs.get("mcpu", None)
        arch = normalize_rocm_arch(mcpu)
        if arch is None:
            raise RocmArchError(
                f"ROCm target {target.kind.name!r} has mcpu={mcpu!r}, which is not an AMD GPU "
                "architecture; write it as Target({'kind': 'rocm', 'mcpu': 'gfx942'})",
                mcpu=mcpu)
        features = str(mcpu).strip().partition(":")[2]
        return cls(arch=arch, features=features,
                   mtriple=str(target.attrs.get("mtriple", ROCM_MTRIPLE) or ROCM_MTRIPLE),
                   warp_size=int(target.attrs.get("thread_warp_size", 64)),
                   native_warp_size=warp_size_for_arch(arch))

    def to_attr(self) -> dict[str, Any]:
        """The value stored under :data:`DEVICE_ATTR` (strings and ints; ``-1``: unknown)."""
        return {"arch": self.arch, "features": self.features, "mtriple": self.mtriple,
                "warp_size": self.warp_size,
                "native_warp_size": -1 if self.native_warp_size is None else self.native_warp_size}

    @classmethod
    def from_attr(cls, value: Mapping[str, Any]) -> RocmDeviceInfo:
        """Read the value stored under :data:`DEVICE_ATTR`."""
        native = int(value["native_warp_size"])
        return cls(arch=str(value["arch"]), features=str(value["features"]),
                   mtriple=str(value["mtriple"]), warp_size=int(value["warp_size"]),
                   native_warp_size=None if native < 0 else native)


def rocm_device_info(mod: IRModule) -> RocmDeviceInfo | None:
    """The device the ``hip`` hooks recorded on host module ``mod``, or ``None``."""
    value = mod.attrs.get(DEVICE_ATTR)
    return None if value is None else RocmDeviceInfo.from_attr(value)

"""What the CUDA translation unit of a ``cuda_host`` build needs to compile.

The ``cuda`` hooks record a :class:`CudaHostRequirements` on the host ``IRModule``
(attribute :data:`REQUIREMENTS_ATTR`, a map of strings and string lists, which is what
TVM 0.27's ``IRModule.with_attr`` stores); :func:`cuda_host_requirements` reads it back.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._errors import CudaArchError

if TYPE_CHECKING:
    from tvm.ir import IRModule

__all__ = ["REQUIREMENTS_ATTR", "CudaHostRequirements", "cuda_host_requirements",
           "normalize_arch"]

REQUIREMENTS_ATTR = "tilelang_hostcg_cuda.requirements"
"""Host ``IRModule`` attribute holding the recorded requirements."""

_ARCH = re.compile(r"^(?:sm_|compute_)?(\d{2,3})([a-z]?)$")
_DOTTED = re.compile(r"^(\d{1,2})\.(\d)([a-z]?)$")


def normalize_arch(arch: object) -> str:
    """Spell a CUDA architecture as ``nvcc -arch`` wants it: ``sm_90``, ``sm_90a``...

    Accepts ``"sm_90"``, ``"sm_90a"``, ``"compute_90"``, ``"90"``, ``90`` and ``"9.0"``.
    Raises :class:`CudaArchError` for anything else.
    """
    text = str(arch).strip().lower() if isinstance(arch, (str, int)) else ""
    match = _ARCH.match(text)
    if match:
        return f"sm_{match.group(1)}{match.group(2)}"
    match = _DOTTED.match(text)
    if match:
        return f"sm_{match.group(1)}{match.group(2)}{match.group(3)}"
    raise CudaArchError(f"{arch!r} is not a CUDA architecture; write it as 'sm_90' (or '90', "
                        "'9.0'), the form of the 'arch' attribute of a TVM cuda target",
                        arch=arch)


@dataclass(frozen=True, slots=True)
class CudaHostRequirements:
    """How to compile the translation unit ``tvm.backend.cuda.export_cuda_host`` returns.

    ``arch`` is the device architecture (``sm_90``); ``device_kind`` the TVM target kind
    of the kernels; ``cxx_standard`` and ``libraries`` what the generated host wrappers
    need (tvm-ffi's headers and ``libtvm_ffi``).
    """

    arch: str
    device_kind: str = "cuda"
    cxx_standard: str = "c++17"
    libraries: tuple[str, ...] = ("tvm_ffi",)

    def __post_init__(self) -> None:
        object.__setattr__(self, "arch", normalize_arch(self.arch))
        object.__setattr__(self, "libraries", tuple(self.libraries))

    def nvcc_options(self) -> list[str]:
        """The ``nvcc`` options these requirements imply (no paths, which are per machine)."""
        return [f"-std={self.cxx_standard}", f"-arch={self.arch}",
                *(f"-l{lib}" for lib in self.libraries)]

    def to_attr(self) -> dict[str, Any]:
        """The value stored under :data:`REQUIREMENTS_ATTR`."""
        return {"arch": self.arch, "device_kind": self.device_kind,
                "cxx_standard": self.cxx_standard, "libraries": list(self.libraries)}

    @classmethod
    def from_attr(cls, value: Mapping[str, Any]) -> CudaHostRequirements:
        """Read the value stored under :data:`REQUIREMENTS_ATTR` (a TVM map or a dict)."""
        return cls(arch=str(value["arch"]), device_kind=str(value["device_kind"]),
                   cxx_standard=str(value["cxx_standard"]),
                   libraries=tuple(str(lib) for lib in value["libraries"]))


def cuda_host_requirements(mod: IRModule) -> CudaHostRequirements | None:
    """The requirements the ``cuda`` hooks recorded on host module ``mod``, or ``None``.

    They are recorded when the host target is ``cuda_host``; read them from the module
    the hooks returned (``tilelang_hostcg.apply_host_codegen_hooks``).
    """
    value = mod.attrs.get(REQUIREMENTS_ATTR)
    return None if value is None else CudaHostRequirements.from_attr(value)

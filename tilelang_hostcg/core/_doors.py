"""A layer's front door: the names its ``__init__`` lets other layers use, each loaded from the
module that defines it on first access (so entering a layer imports only what is used)."""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping


class FrontDoor:
    """The names a package exports, by the private module that defines each. A package's
    ``__getattr__`` calls :meth:`open`; the value is kept in the package's namespace, so a
    later lookup does not come here again."""

    __slots__ = ("_module_of", "names", "package")

    def __init__(self, package: str, where: Mapping[str, tuple[str, ...]]) -> None:
        self.package = package
        self._module_of = {name: module for module, names in where.items() for name in names}
        self.names = sorted(self._module_of)

    def module_of(self, name: str) -> str | None:
        """The full name of the module that defines ``name``; None where the door has no such name."""
        module = self._module_of.get(name)
        return None if module is None else f"{self.package}.{module}"

    def open(self, name: str, namespace: MutableMapping[str, object]) -> object:
        """``name`` from its module, kept in ``namespace`` (the package's globals)."""
        module = self.module_of(name)
        if module is None:
            raise AttributeError(f"module {self.package!r} has no attribute {name!r}")
        value = getattr(__import__(module, fromlist=[name]), name)
        namespace[name] = value
        return value

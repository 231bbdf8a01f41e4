"""The package's warnings: :class:`PluginWarning` and a subclass per kind of warning, each with its
``code`` (as pluggy has a class per warning), and how the package warns: at the user's line, once per
process for each finding (its code and facts, never its words)."""

from __future__ import annotations

import sys
import warnings
from typing import TYPE_CHECKING

from ._errors import shown
from ._process import PROCESS

if TYPE_CHECKING:
    from types import FrameType

Facts = tuple[str | None, ...]
"""What a warning is about, as data (names, kinds: what a report can carry as JSON): with its code,
what makes two warnings the same one."""


class PluginWarning(UserWarning):
    """The root of the package's warnings (filter on it): something was skipped, or cannot do what it
    says, while the rest served. Each kind of warning is a subclass with its own :attr:`code`."""

    code = "plugin"
    """The kind of warning, as ``check`` and the documents name it."""
    failed_plugin = False
    """Whether it says that a plugin which failed to load, or is incompatible, was skipped because
    something else served its kind (``check`` reports that plugin itself, and leaves the warning out)."""
    facts: Facts = ()
    """What this warning is about (set on each warning given): with :attr:`code`, its identity."""

    @property
    def key(self) -> tuple[str, Facts]:
        """``(code, facts)``: two warnings with the same key say the same thing, whatever their words. A
        warning of this class itself, with no facts (as another package or an older caller gives it), is
        known by its text alone."""
        if not self.facts and type(self) is PluginWarning:
            return self.code, (str(self),)
        return self.code, self.facts


class ActivationFailedPluginWarning(PluginWarning):
    """Activation of a compiler's integration failed: that compiler runs stock."""

    code = "activation-failed"


class ControlPluginWarning(PluginWarning):
    """A ``TILELANG_HOSTCG_*`` control cannot do what it says (a typo, a value not understood)."""

    code = "control"


class MetadataPluginWarning(PluginWarning):
    """An installed distribution's metadata cannot be read as it says (its entry points, its files)."""

    code = "plugin-metadata"


class NearMissPluginWarning(PluginWarning):
    """A distribution advertises entry points in a group whose name is close to one of ours."""

    code = "near-miss"


class PredicatePluginWarning(PluginWarning):
    """A codegen's ``supports_target`` raised or did not return a bool: treated as not matching."""

    code = "predicate-failed"


class SkippedPluginWarning(PluginWarning):
    """A plugin that failed to load, or is incompatible, was skipped while something else served."""

    code = "plugin-skipped"
    failed_plugin = True


class TileLangBuildsPluginWarning(PluginWarning):
    """More than one TileLang build is installed: which one ``import tilelang`` gives is an accident."""

    code = "tilelang-builds"


class BypassedPluginWarning(PluginWarning):
    """A compiler build completed without calling the function an integration replaced."""

    code = "route-bypassed"


class UnservedArgumentsPluginWarning(PluginWarning):
    """A compiler called a replaced function with arguments the replacement was not written for."""

    code = "route-arguments"


class LeftInPlacePluginWarning(PluginWarning):
    """``uninstall()`` left a replaced function as it is: another package has set it since."""

    code = "uninstall-left"


class PatchesNothingPluginWarning(PluginWarning):
    """``install()`` patches nothing: the compiler builds through the native API or TVM's extension point."""

    code = "install-patches-nothing"


class NativeUndeclaredPluginWarning(PluginWarning):
    """A module calls the native API without declaring the API it was written for."""

    code = "native-undeclared"


class ExtensionPointTakenPluginWarning(PluginWarning):
    """TVM's host-codegen extension point is already held by another package: TVM's builds do not use
    the installed plugins."""

    code = "extension-point-taken"


class NativeDeclarationPluginWarning(PluginWarning):
    """A module declares a native API this release does not serve: its builds are the compiler's own."""

    code = "native-declaration"


_PACKAGE = __name__.partition(".")[0]
# A warning looks past our frames, TileLang's and TVM's (they call us from their compilers and
# at import), the import system's and contextlib's, to reach the user's line.
_PASSED = (_PACKAGE, "_tilelang_hostcg_hook", "tilelang", "tvm", "importlib", "contextlib")


def _outside(frame: FrameType | None, level: int = 2) -> tuple[int, FrameType | None]:
    """The ``stacklevel`` of the user's line (the first frame not of :data:`_PASSED`), and it."""
    while frame is not None:
        name = frame.f_globals.get("__name__")
        if not (isinstance(name, str) and any(name == p or name.startswith(p + ".") for p in _PASSED)):
            break
        frame = frame.f_back
        # ``warnings`` does not count the import system's frozen frames: neither do we.
        while frame is not None and "importlib" in (path := frame.f_code.co_filename) and "_bootstrap" in path:
            frame = frame.f_back
        level += 1
    return level, frame


def warning_class(code: str) -> type[PluginWarning]:
    """The warning class of ``code`` (:class:`PluginWarning` itself for a code no subclass has)."""
    todo = [PluginWarning]
    while todo:
        category = todo.pop()
        if category.code == code:
            return category
        todo += category.__subclasses__()
    return PluginWarning


def warn_plugin(message: str, category: type[PluginWarning] = PluginWarning, *, facts: Facts = ()) -> None:
    """Warn at the user's line with ``message`` :func:`shown`, a ``category`` about ``facts``; the filters
    apply, but under :func:`at_import`."""
    level, frame = _outside(sys._getframe(1))
    warning = category(shown(message))
    warning.facts = facts
    try:
        warnings.warn(warning, stacklevel=level)
    except category as raised:
        if not PROCESS.thread.importing:
            raise
        where = frame or sys._getframe()
        warnings.showwarning(raised, category, where.f_code.co_filename, where.f_lineno)


def warn_once(message: str, category: type[PluginWarning] | str, *, facts: Facts) -> None:
    """:func:`warn_plugin`, once per process for each finding: a ``category`` (or its code) and its
    ``facts``; the words do not decide (two findings worded alike are two warnings)."""
    kind = warning_class(category) if isinstance(category, str) else category
    key = (kind.code, facts)
    if key not in PROCESS.warned:
        warn_plugin(message, kind, facts=facts)  # raised as an error (``-W error``): not yet shown
        PROCESS.warned.add(key)

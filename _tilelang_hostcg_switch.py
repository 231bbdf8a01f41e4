"""tilelang-hostcg's switches: how a switch variable reads (the on and off words, one rule for every
``TILELANG_HOSTCG_*`` switch), and the off switch of activation. A companion of the start-up hook
beside the package: it imports nothing, so that the hook reads the off switch at ``import tilelang``
without importing anything of ``tilelang_hostcg`` (the switch is how a user leaves it untouched)."""

# Not ``from typing import TYPE_CHECKING``: importing ``typing`` would cost more than this module.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["ENV_AUTO_INSTALL", "OFF", "ON", "activation_off", "is_off", "is_on", "is_understood"]

ENV_AUTO_INSTALL = "TILELANG_HOSTCG_AUTO_INSTALL"
ON = ("1", "true", "yes", "on")
"""The words that turn a switch on (any case, spaces around ignored)."""
OFF = ("0", "false", "no", "off")
"""The words that turn a switch off (any case, spaces around ignored)."""


def _word(value: "str | None") -> str:
    return (value or "").strip().lower()


def is_on(value: "str | None") -> bool:
    """Whether a switch variable's value is one of :data:`ON`."""
    return _word(value) in ON


def is_off(value: "str | None") -> bool:
    """Whether a switch variable's value is one of :data:`OFF`."""
    return _word(value) in OFF


def is_understood(value: "str | None") -> bool:
    """Whether a switch variable's value is unset, empty, or one of :data:`ON` and :data:`OFF`."""
    return _word(value) in (*ON, *OFF, "")


def activation_off(environ: "Mapping[str, str] | None" = None) -> bool:
    """The off switch of activation, the one rule: ``TILELANG_HOSTCG_AUTO_INSTALL`` is one of :data:`OFF`."""
    if environ is None:
        import os

        environ = os.environ
    return is_off(environ.get(ENV_AUTO_INSTALL))

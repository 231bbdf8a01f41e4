"""Advice for a kind nothing serves where a control skips what is installed: the control is named,
never an install of what is installed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..discovery import ENV_AUTOLOAD_OFF, ENV_DISABLE, ENV_ONLY

if TYPE_CHECKING:
    from ..discovery import Controls

AUTOLOAD_OFF_TEXT = (f"plugin autoload is off ({ENV_AUTOLOAD_OFF}=1): no plugin's entry point is read; unset "
                     f"{ENV_AUTOLOAD_OFF} to use the installed plugins")


def skipped_text(distribution: str, kind: str, controls: Controls) -> str | None:
    """Where ``distribution`` is installed and a control skips it for ``kind``: which control, and how
    to undo it; else ``None``."""
    from ..environment import installed_version
    control = controls.skip_control(distribution, kind)
    if control is None or installed_version(distribution) is None:
        return None
    variable, item = control
    undo = {ENV_AUTOLOAD_OFF: f"unset {variable}", ENV_ONLY: f"add {distribution!r} to {variable}",
            ENV_DISABLE: f"take {item!r} out of {variable}"}[variable]
    return f"{distribution!r} is installed, but {variable}={item} skips it: {undo} to use it"

"""Every piece of repair advice, worded once and safe to follow as written: a reinstall never takes the
dependencies along (they may replace torch's CPU build), an uninstall never asks, and what pip cannot
do is said as a step by hand. The facts (what is installed, and how) come from the layer that read them."""

from __future__ import annotations

import shlex


def quoted(spec: str) -> str:
    """``spec`` quoted for any shell, and quoted alike everywhere (``'NAME==1.0'``)."""
    text = shlex.quote(spec)
    return text if text.startswith("'") else f"'{spec}'"


def reinstall(name: str, version: object = None, *, editable: bool = False) -> str:
    """``pip install --force-reinstall --no-deps 'NAME==VERSION'`` (or a requirement, folder, file, URL),
    or ``pip install --no-deps -e 'FOLDER'``."""
    spec = quoted(f"{name}=={version}" if version else str(name))
    return f"pip install --no-deps -e {spec}" if editable else f"pip install --force-reinstall --no-deps {spec}"


def uninstall(name: str) -> str:
    """``pip uninstall -y NAME``: it asks nothing, so it runs as written."""
    return f"pip uninstall -y {name}"


def remove_by_hand(folder: str) -> str:
    """The step for metadata that lists no files (pip can neither uninstall nor reinstall it)."""
    return (f"remove its metadata folder {folder!r} by hand (it lists no files, so pip cannot uninstall it; it "
            "ships nothing of its own)")


def reinstall_by_hand(described: str) -> str:
    """The step for a build whose metadata lists no files, to keep it: installed again as it was."""
    return f"reinstall {described} as you installed it (it lists no files, so pip cannot reinstall it over its files)"


def first_party_install(distribution: str, checkout_folder: str | None) -> str:
    """How to install the first-party plugin ``distribution`` (the folder ``plugins/<distribution>`` of
    tilelang-hostcg's repository): from ``checkout_folder``, the checkout tilelang-hostcg was installed
    from where it holds the plugin, else from the root of any checkout."""
    if checkout_folder is not None:
        return (f"`pip install {shlex.quote(checkout_folder)}` (the first-party plugin {distribution}, from the "
                "checkout tilelang-hostcg was installed from)")
    return (f"the first-party plugin {distribution}, which ships in the `plugins/` folder of tilelang-hostcg's "
            f"repository: in the root folder of a checkout, `pip install ./plugins/{distribution}`")

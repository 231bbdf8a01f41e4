"""How a distribution was installed, from its PEP 610 ``direct_url.json`` document (read by
:func:`._metadata.direct_url`, or kept in a lock file): the folder, file, URL or VCS it came from,
and whether it is editable. Pure functions of the document: nothing is read here."""

from __future__ import annotations

from typing import Any, NamedTuple


class PipSource(NamedTuple):
    """What ``pip install`` takes to install a distribution again as it was installed: ``spec`` (a
    folder, a file, a URL or ``vcs+URL@revision``) and whether it was ``editable``."""

    spec: str
    editable: bool


def file_url_path(url: object) -> str | None:
    """The local path a ``file:`` URL names, else ``None``."""
    from urllib.parse import unquote, urlsplit
    parts = urlsplit(str(url))
    return unquote(parts.path) if parts.scheme == "file" else None


def is_editable(doc: dict[str, Any]) -> bool:
    """Whether a ``direct_url.json`` document says the install is editable."""
    dir_info = doc.get("dir_info")
    return isinstance(dir_info, dict) and dir_info.get("editable") is True


def pip_source(doc: object) -> PipSource | None:
    """Where a ``direct_url.json`` document says the distribution came from, as ``pip install`` takes
    it; ``None`` where it names none (installed from an index, or a document that is no object)."""
    if not isinstance(doc, dict):
        return None
    url = doc.get("url")
    if not isinstance(url, str) or not url:
        return None
    spec = file_url_path(url) or url
    vcs = doc.get("vcs_info")
    if isinstance(vcs, dict) and isinstance(vcs.get("vcs"), str):
        revision = vcs.get("requested_revision") or vcs.get("commit_id")
        spec = f"{vcs['vcs']}+{url}" + (f"@{revision}" if isinstance(revision, str) else "")
    return PipSource(spec, is_editable(doc))

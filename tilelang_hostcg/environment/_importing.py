"""What the import system says of a module while it runs: the one reading of a spec's
``_initializing`` flag (Python sets it while a module's top-level code runs, in any thread)."""

from __future__ import annotations


def is_initializing(module_or_spec: object) -> bool:
    """Whether a module (given itself or by its ``__spec__``) is still being imported, by this thread or another."""
    spec = getattr(module_or_spec, "__spec__", module_or_spec)
    return bool(getattr(spec, "_initializing", False))

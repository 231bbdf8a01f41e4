"""The states of a plugin source (an entry point, or a lazy module registered in code), apart from the
value types: discovery plans in them at ``import tvm``, where the types themselves are not needed."""

from __future__ import annotations

from enum import Enum
from typing import Literal


class SourceState(str, Enum):
    """The state of a plugin source (an entry point, or a lazy module registered in code); its value
    is the word the documents show. ``LAZY`` is also a source that failed for the moment (retried)."""

    LAZY = "lazy"
    LOADING = "loading"
    LOADED = "loaded"
    BROKEN = "broken"
    DISABLED = "disabled"
    INCOMPATIBLE = "incompatible"

    def __str__(self) -> str:
        return self.value

    @property
    def failed(self) -> bool:
        """A failure to report: the source's import failed, or its requirements are not met."""
        return self in (SourceState.BROKEN, SourceState.INCOMPATIBLE)

    @property
    def skipped(self) -> bool:
        """Never imported by decision: a control skips it, or its requirements are not met."""
        return self in (SourceState.DISABLED, SourceState.INCOMPATIBLE)

    @property
    def unusable(self) -> bool:
        """Serves nothing: failed or skipped."""
        return self.failed or self.skipped


PlanState = Literal[SourceState.LAZY, SourceState.DISABLED, SourceState.INCOMPATIBLE]
"""What discovery plans, before any load."""

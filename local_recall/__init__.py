"""local-recall: a coding agent's memory that lives in the repository.

`from local_recall import Recall` is the library API. The import is lazy so that the hooks,
which import this package on every prompt, do not pay for YAML, LanceDB or the MCP SDK."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["Recall", "Settings", "__version__"]

if TYPE_CHECKING:
    from local_recall.recall import Recall
    from local_recall.settings import Settings


def __getattr__(name: str) -> Any:
    if name == "Recall":
        from local_recall.recall import Recall

        return Recall
    if name == "Settings":
        from local_recall.settings import Settings

        return Settings
    raise AttributeError(f"module 'local_recall' has no attribute {name!r}")

"""Importing lancedb without paying for the REST client it never uses here.

`import lancedb` imports `lance_namespace`, which imports the models of the generated REST
client `lance_namespace_urllib3_client`. Importing anything from that package runs its
`__init__`, which also imports every API class, and their ~370 `validate_call` methods build
pydantic validators at import: ~0.8 s of CPU on a quiet machine (seconds under load) in every
process that opens an index — the daemon, the MCP server, a cold `search` or `index` — though
only a remote (REST) namespace ever calls them.

So, before lancedb is imported, the package is registered with its path but without running
its `__init__`: its submodules (the models) import as usual, and the `__init__` runs on first
access to any attribute the package itself defines (PEP 562 `__getattr__`). Nothing is
skipped, only deferred; if anything here does not go as expected, lancedb is imported plainly.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from types import ModuleType
from typing import Any

REST_CLIENT = "lance_namespace_urllib3_client"

_lock = threading.Lock()


def import_lancedb() -> ModuleType:
    """`import lancedb`, with the REST client's API classes deferred to first use."""
    with _lock:
        if "lancedb" not in sys.modules:
            _defer_package_init(REST_CLIENT)
    import lancedb

    return lancedb


def _defer_package_init(name: str) -> None:
    if name in sys.modules:
        return
    try:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or spec.submodule_search_locations is None:
            return
        module = importlib.util.module_from_spec(spec)
    except (ImportError, ValueError, AttributeError):
        return
    loader = spec.loader
    run_lock = threading.RLock()

    def run_init(attribute: str) -> Any:
        with run_lock:
            if module.__dict__.get("__getattr__") is run_init:
                del module.__dict__["__getattr__"]
                loader.exec_module(module)
        return getattr(module, attribute)

    module.__dict__["__getattr__"] = run_init
    sys.modules[name] = module

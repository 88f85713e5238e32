"""The modules a subprocess imports, recorded from inside it into a file of its own.

    imports = ImportLog(tmp_path / "imports")
    ran = run_hook(..., env=imports.env(hook_env(repo)))
    assert "local_recall.recall" in imports.take()

A `sitecustomize` on PYTHONPATH puts a finder first on `sys.meta_path` that writes each name it
is asked for: every import statement and `importlib.import_module`, in every thread, with one
`os.write` each (nothing to flush when a hook ends with `os._exit`). Not `-X importtime`: that
prints to file descriptor 2, which the model loader points at /dev/null while onnxruntime
imports (search/embedders/minilm.py), so whatever another thread imported meanwhile went unseen.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

LOG_ENV = "RECORD_IMPORTS_TO"  # not LOCAL_RECALL_*: those are part of the hook's settings key

SITECUSTOMIZE = f'''"""Written by tests/import_log.py: records the modules this process seeks."""
import os
import sys

_LOG = os.open(os.environ["{LOG_ENV}"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)


class _Recorder:
    @staticmethod
    def find_spec(name, path=None, target=None):
        os.write(_LOG, (name + "\\n").encode())
        return None  # the next finder finds it


sys.meta_path.insert(0, _Recorder)
'''


@dataclass(frozen=True)
class ImportLog:
    folder: Path  # holds the sitecustomize and the log; made on first use

    @property
    def path(self) -> Path:
        return self.folder / "imports.log"

    def env(self, base: Mapping[str, str]) -> dict[str, str]:
        """`base` with this recorder loaded by every Python process started with it."""
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
        paths = [str(self.folder), *filter(None, [base.get("PYTHONPATH", "")])]
        return {**base, "PYTHONPATH": os.pathsep.join(paths), LOG_ENV: str(self.path)}

    def take(self) -> set[str]:
        """The modules looked for since the last take (the log is emptied)."""
        try:
            names = set(self.path.read_text(encoding="utf-8").splitlines())
        except FileNotFoundError:
            return set()
        self.path.unlink()
        return names

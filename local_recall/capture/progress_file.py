"""The pipeline's progress on disk (its values: progress.py): `local-recall/state/pipeline.json`
read and written, and the fingerprint of a transcript's processed prefix.

The state is machine-local and gitignored. It is only a cache of progress: memory creation is
idempotent by content hash, so losing the file (or finding it corrupt) makes the next pass
re-read transcripts from the start and spend API calls again, but it can never duplicate a
memory file. Writes are atomic (temp file + rename), so a killed pass leaves the previous state.

The values and their JSON form live in `progress.py` (pure); the decisions over them
(`plan_pass`, `retry_delay`, ...) in `pipeline_plan.py`; this module reads and writes the file.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from local_recall.capture.progress import STATE_VERSION, PipelineState, state_from_json
from local_recall.errors import StorageError
from local_recall.repo.files import read_bytes_nofollow, write_bytes_atomic

log = logging.getLogger(__name__)

STATE_FILENAME = "pipeline.json"
# The fingerprint of a processed prefix reads at most this much from its head and its tail:
# O(1) per check instead of re-hashing a many-megabyte transcript on every append.
FINGERPRINT_SAMPLE_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class LoadedState:
    state: PipelineState
    problem: str | None  # why the file was not usable (it was set aside), None when it was


def state_path(state_dir: Path) -> Path:
    return state_dir / STATE_FILENAME


def load_state(state_dir: Path) -> LoadedState:
    """Read the state; a missing file is an empty state. A corrupt file is renamed to
    `pipeline.json.corrupt` (for a person to look at) and the pass starts over from an empty
    state, which is safe because memory creation is idempotent. Bad entries are dropped alone."""
    path = state_path(state_dir)
    try:
        raw = read_bytes_nofollow(path)
    except FileNotFoundError:
        return LoadedState(PipelineState(), None)
    except OSError as exc:
        raise StorageError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(raw)
        if not isinstance(data, dict) or not isinstance(data.get("transcripts"), dict):
            raise ValueError("not a pipeline state object")
        if data.get("version") != STATE_VERSION:
            raise ValueError(f"unknown version {data.get('version')!r}")
    except (ValueError, UnicodeDecodeError) as exc:
        problem = f"{path} was unreadable ({str(exc)[:120]}); starting over"
        log.warning("%s", problem)
        _set_aside(path)
        return LoadedState(PipelineState(), problem)
    state, dropped = state_from_json(data)
    for reason in dropped:
        log.warning("pipeline state: %s", reason)
    note = f"{len(dropped)} malformed entries dropped from {path}" if dropped else None
    return LoadedState(state, note)


def save_state(state_dir: Path, state: PipelineState) -> None:
    payload = json.dumps(state.to_json(), indent=1, ensure_ascii=False).encode("utf-8")
    write_bytes_atomic(state_path(state_dir), payload)


def prefix_fingerprint(path: Path, offset: int) -> str | None:
    """A fingerprint of the first `offset` bytes of `path`: its length, its head and its tail
    (each up to FINGERPRINT_SAMPLE_BYTES). Claude Code only appends to a transcript, so a
    changed head or a changed end of the processed part means the file was replaced or
    rewritten. None when the file is shorter than `offset` or cannot be read."""
    digest = hashlib.sha256(str(offset).encode())
    try:
        with path.open("rb") as stream:
            if os.fstat(stream.fileno()).st_size < offset:
                return None
            digest.update(stream.read(min(offset, FINGERPRINT_SAMPLE_BYTES)))
            if offset > FINGERPRINT_SAMPLE_BYTES:
                tail_start = max(FINGERPRINT_SAMPLE_BYTES, offset - FINGERPRINT_SAMPLE_BYTES)
                stream.seek(tail_start)
                digest.update(stream.read(offset - tail_start))
    except OSError:
        return None
    return digest.hexdigest()


def _set_aside(path: Path) -> None:
    try:
        os.replace(path, path.with_name(path.name + ".corrupt"))
    except OSError as exc:
        log.warning("cannot set aside %s: %s", path, exc)

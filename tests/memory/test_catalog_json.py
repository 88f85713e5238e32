"""The catalog's encoder (memory/catalog_json.py): the same bytes as encoding from scratch,
whatever changed between saves; and a store's catalog file after writes reads back whole."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from local_recall.memory.catalog_json import CatalogEncoder


def _entry(rng: random.Random) -> dict[str, Any]:
    return {
        "stat": [rng.randrange(10**9), rng.randrange(10**18), rng.randrange(10**4)],
        "memory": {"subject": rng.choice(["a", 'é "quoted"', "tab\there", "\u2028"]), "n": 1},
    }


def test_each_save_is_the_bytes_of_encoding_everything_again() -> None:
    rng = random.Random(7)
    encoder = CatalogEncoder()
    entries = {f"{i:04}.md": _entry(rng) for i in range(50)}
    for round_ in range(30):
        if round_ % 3 == 0:  # a catalog read back from disk: every entry a new object
            entries = json.loads(json.dumps(entries))
        for _ in range(rng.randrange(4)):
            entries[f"{rng.randrange(80):04}.md"] = _entry(rng)  # new file or a changed one
        for name in rng.sample(sorted(entries), rng.randrange(3)):
            del entries[name]
        entries = dict(entries)  # the store saves a fresh dict of the same entry objects
        expected = json.dumps({"version": 3, "entries": entries}).encode()
        assert encoder.encode(3, entries) == expected


def test_the_first_encoding_is_one_call_and_the_next_ones_reuse_texts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first encoding (a first scan's) is one dumps; later ones keep each entry's text,
    so a third encoding with one entry changed encodes that entry alone."""
    encoder = CatalogEncoder()
    entries = {f"{i}.md": {"stat": [i, 0, 0]} for i in range(3)}
    calls: list[object] = []
    real = json.dumps

    def counting(value: Any, **kwargs: Any) -> str:
        calls.append(value)
        return real(value, **kwargs)

    monkeypatch.setattr(json, "dumps", counting)
    encoder.encode(3, entries)
    assert len(calls) == 1  # the whole document at once
    encoder.encode(3, entries)
    calls.clear()
    changed = {**entries, "1.md": {"stat": [9, 9, 9]}}
    assert json.loads(encoder.encode(3, changed))["entries"]["1.md"]["stat"] == [9, 9, 9]
    assert {"stat": [9, 9, 9]} in calls
    assert entries["0.md"] not in calls and entries["2.md"] not in calls


def test_an_entry_replaced_under_the_same_name_is_encoded_again() -> None:
    encoder = CatalogEncoder()
    first = {"x.md": {"stat": [1, 2, 3]}}
    encoder.encode(3, first)
    second = {"x.md": {"stat": [1, 2, 4]}}
    assert json.loads(encoder.encode(3, second))["entries"]["x.md"]["stat"] == [1, 2, 4]

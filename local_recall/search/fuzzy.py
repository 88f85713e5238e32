"""Fuzzy matching of a query's words to each memory's subject and keywords: the signal that
forgives typos and finds identifiers written another way (`procesed_log`, `ProcessedLog`).

Pure computation over memories (rapidfuzz does the string distances); the score it gives a
memory is one of the raw signals `scoring.score_hit` weighs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Final

from local_recall.memory.model import Memory
from local_recall.search.text_terms import identifier_parts, words

FUZZY_MIN_RATIO: Final = 80.0  # rapidfuzz ratio (0..100) under which two words differ


class FuzzyMatcher:
    """rapidfuzz over the words of each memory's subject and keywords (identifiers split).

    A memory's fuzzy score is the share of the query's words that have a close match (ratio
    ≥ 80: one or two typos) among its words, each counted by how close it is. The vocabulary is
    bucketed by first and second letter so a query word is compared with a small slice of it."""

    def __init__(self, memories: Mapping[str, Memory]) -> None:
        # Words in more subjects than this are skipped: fuzzy matching is for typos and rare
        # identifiers, and a word shared by 2% of a large store would touch thousands of rows.
        self._common = max(200, len(memories) // 50)
        self._postings: dict[str, set[str]] = defaultdict(set)
        for key, memory in memories.items():
            for word in self.words_of(memory):
                self._postings[word].add(key)
        self._buckets: dict[str, list[str]] = defaultdict(list)
        for word in self._postings:
            self._buckets["0" + word[0]].append(word)
            if len(word) > 1:
                self._buckets["1" + word[1]].append(word)

    @staticmethod
    def words_of(memory: Memory) -> set[str]:
        text = f"{memory.subject} {' '.join(memory.keywords)}"
        found = {w for w in words(text) if len(w) > 1}
        found.update(identifier_parts(text))
        found.update(w.lower() for w in memory.keywords if " " not in w and len(w) > 1)
        return found

    def scores(self, terms: Sequence[str]) -> dict[str, float]:
        from rapidfuzz import fuzz, process

        wanted = [t for t in terms if len(t) > 1]
        if not wanted:
            return {}
        totals: dict[str, float] = defaultdict(float)
        for term in wanted:
            best: dict[str, float] = {}
            choices = {
                *self._buckets.get("0" + term[0], ()),
                *(self._buckets.get("1" + term[1], ()) if len(term) > 1 else ()),
            }
            if term in self._postings:
                choices.add(term)
            cutoff = 100.0 if len(term) < 4 else FUZZY_MIN_RATIO  # short words: exact only
            for word, ratio, _ in process.extract(
                term, list(choices), scorer=fuzz.ratio, score_cutoff=cutoff, limit=None
            ):
                keys = self._postings[word]
                if len(keys) > self._common:
                    continue  # a word in this many subjects tells nothing apart (BM25 weighs it)
                for key in keys:
                    best[key] = max(best.get(key, 0.0), ratio / 100.0)
            for key, value in best.items():
                totals[key] += value
        return {key: value / len(wanted) for key, value in totals.items()}

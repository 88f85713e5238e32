"""Regenerate `betterleaks.json` from Betterleaks' default `betterleaks.toml` (MIT).

    python -m local_recall.redaction.rules.translate path/to/betterleaks.toml

Betterleaks (the successor of gitleaks, same rule lineage) writes its rules for Go's RE2 and
filters findings with CEL expressions. What this keeps, per rule: the id (as the redaction
kind), the regex as written (we run it with RE2 too: google-re2, linear time on any input), the
keywords (a rule only runs near one of them) and the entropy threshold of its filter; and the
global filter's placeholder patterns and stop words. `translate_regex` turns a rule into Python
`re` syntax, for the tests that generate samples from each rule: a flag group `(?i)` in the
middle of a pattern (RE2 scopes it to the rest of the enclosing group; Python refuses it)
becomes a scoped `(?i:...)`, `\\z` becomes `\\Z`, and POSIX classes (`[[:alnum:]]`) are
spelled out. Left out: rules Betterleaks itself does not report alone (`skipReport`), rules
without a regex, and `EXCLUDED` below, each with its reason. Validation (`validate`, live
HTTP calls) is never used: redaction stays offline.
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

EXCLUDED = {
    # Keyword-in-context rules whose CEL filters (code awareness, placeholders, nearby lines)
    # do not translate: our assignment, URL and prose rules do this job (assignments.py).
    "generic-api-key": "our assignment rule",
    "generic-password": "our assignment and prose rules",
    "generic-username": "a user name is not a secret",
    "generic-credential-uri": "our password-in-url rule",
    # Credentials in a curl command line: our header, URL and flag rules find them anywhere,
    # not only after "curl".
    "curl-auth-header": "our bearer/basic header rules",
    "curl-auth-user": "our password-in-url and flag rules",
    # Our PEM rule takes the whole block, also folded, escaped or cut short.
    "private-key": "our PEM rule",
}
_POSIX_CLASSES = {
    "alnum": "A-Za-z0-9",
    "alpha": "A-Za-z",
    "digit": "0-9",
    "xdigit": "0-9A-Fa-f",
    "upper": "A-Z",
    "lower": "a-z",
    "space": r"\s",
    "word": r"\w",
}
_ENTROPY = re.compile(r'entropy\(finding\["secret"\]\)\s*<=?\s*([0-9.]+)')


def translate_regex(pattern: str) -> str:
    """RE2 -> Python `re`: scope a mid-pattern `(?i)` to the rest of its group; `\\z` -> `\\Z`."""
    pattern = re.sub(r"(?<!\\)\\z", r"\\Z", pattern)
    for posix, members in _POSIX_CLASSES.items():
        pattern = pattern.replace(f"[:{posix}:]", members)
    out: list[str] = []
    closers: list[int] = []  # per open group: how many extra ")" to add when it closes
    opened_extra = 0
    i, in_class = 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
            # `[` `&` `|` `~` inside a set are literals in RE2; Python warns about them (future
            # set operations), so escape them.
            out.append("\\" + c if c in "[&|~" else c)
        elif c == "[":
            in_class = True
            out.append(c)
            if pattern[i + 1 : i + 2] == "^":
                out.append("^")
                i += 1
            if pattern[i + 1 : i + 2] == "]":
                out.append("]")
                i += 1
        elif pattern.startswith("(?i)", i) and i > 0:
            out.append("(?i:")
            opened_extra += 1
            i += 4
            continue
        elif c == "(":
            closers.append(opened_extra)
            opened_extra = 0
            out.append(c)
        elif c == ")":
            out.append(")" * opened_extra + ")")
            opened_extra = closers.pop() if closers else 0
        elif c == "|" and opened_extra:
            # RE2: the flag holds to the end of the group, across `|`; close and reopen.
            out.append(")" * opened_extra + "|" + "(?i:" * opened_extra)
        else:
            out.append(c)
        i += 1
    out.append(")" * opened_extra)
    return "".join(out)


def _kind(rule_id: str) -> str:
    return re.sub(r"\.\d+$", "", rule_id)[:40]


def translate(config: dict[str, Any]) -> dict[str, Any]:
    rules: list[dict[str, Any]] = []
    left_out: dict[str, str] = {}
    for rule in config["rules"]:
        rule_id = rule["id"]
        if rule_id in EXCLUDED:
            left_out[rule_id] = EXCLUDED[rule_id]
            continue
        if "regex" not in rule:
            left_out[rule_id] = "no regex (matches file paths)"
            continue
        if rule.get("skipReport"):
            left_out[rule_id] = "skipReport: only a component of another rule"
            continue
        re.compile(translate_regex(rule["regex"]))  # the tests generate samples with Python `re`
        entropy = _ENTROPY.search(rule.get("filter", ""))
        rules.append(
            {
                "id": rule_id,
                "kind": _kind(rule_id),
                "regex": rule["regex"],
                "keywords": sorted({k.lower() for k in rule.get("keywords", ())}),
                "min_entropy": float(entropy.group(1)) if entropy else 0.0,
            }
        )
    # The global filter: `matchesAny(secret, [regexes]) || containsAny(secret, [words])`.
    global_filter = config.get("filter", "")
    split = global_filter.find("containsAny")
    return {
        "source": f"{config.get('title', '')} (minVersion {config.get('minVersion', '?')})",
        "left_out": left_out,
        "not_secrets": re.findall(r"`([^`]*)`", global_filter),
        "stopwords": re.findall(r'"([^"]+)"', global_filter[global_filter.find(", [", split) :])
        if split >= 0
        else [],
        "rules": rules,
    }


def main(argv: list[str]) -> None:
    config = tomllib.loads(Path(argv[1]).read_text(encoding="utf-8"))
    target = Path(__file__).with_name("betterleaks.json")
    target.write_text(json.dumps(translate(config), indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv)

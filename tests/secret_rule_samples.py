"""Planted secrets generated from the vendored rules (local_recall/redaction/rules/): for every
rule a random string its regex matches, placed in four forms: `KEY=value`, prose, code, and a
tool result (JSON-encoded, as a transcript stores it).

Generation walks the parsed regex (`re._parser`): literals as written, a class by a random
member, a bounded repeat a little over its minimum, a branch by a seeded choice. A sample must
match its own rule and pass the rule's entropy threshold; a rule for which 40 tries give none is
listed in UNSATISFIED (its threshold is above what its alphabet reaches). Seeded: every run sees
the same strings. Like secret_corpus.py, nothing here is a literal secret.
"""

from __future__ import annotations

import json
import random
import re
import string
from dataclasses import dataclass
from functools import cache
from importlib import resources
from re import _constants as c  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Any

from local_recall.redaction.rules.translate import translate_regex
from local_recall.redaction.vendored import shannon_entropy

_CANDIDATES = string.ascii_letters + string.digits + "_-+/=.~:@"
_PRINTABLE = _CANDIDATES + "!#$%&*,;<>?[]^{|}() \t'\"`\\"
FORMS = ("env", "prose", "code", "tool")


@dataclass(frozen=True)
class RuleSample:
    rule: str  # the rule id
    kind: str  # the kind the rule reports
    form: str  # one of FORMS
    secret: str  # what must vanish
    text: str


def _in_class(ch: str, items: list[tuple[Any, Any]]) -> bool:
    negate = False
    hit = False
    for op, av in items:
        if op is c.NEGATE:
            negate = True
        elif op is c.LITERAL:
            hit |= ord(ch) == av
        elif op is c.RANGE:
            hit |= av[0] <= ord(ch) <= av[1]
        elif op is c.CATEGORY:
            hit |= _in_category(ch, av)
    return hit != negate


def _in_category(ch: str, category: Any) -> bool:
    tests = {
        c.CATEGORY_DIGIT: ch.isdigit(),
        c.CATEGORY_NOT_DIGIT: not ch.isdigit(),
        c.CATEGORY_WORD: ch.isalnum() or ch == "_",
        c.CATEGORY_NOT_WORD: not (ch.isalnum() or ch == "_"),
        c.CATEGORY_SPACE: ch.isspace(),
        c.CATEGORY_NOT_SPACE: not ch.isspace(),
    }
    return tests.get(category, False)


def _pick(rng: random.Random, items: list[tuple[Any, Any]]) -> str:
    for pool in (_CANDIDATES, _PRINTABLE):
        members = [ch for ch in pool if _in_class(ch, items)]
        if members:
            return rng.choice(members)
    return "a"


def _generate(nodes: Any, rng: random.Random, ignore_case: bool) -> str:
    out: list[str] = []
    for op, av in nodes:
        if op is c.LITERAL:
            ch = chr(av)
            out.append(ch.upper() if ignore_case and rng.random() < 0.3 else ch)
        elif op is c.NOT_LITERAL:
            out.append(rng.choice([ch for ch in _CANDIDATES if ord(ch) != av]))
        elif op is c.ANY:
            out.append(".")  # nearly always an unescaped dot in a host name
        elif op is c.IN:
            out.append(_pick(rng, av))
        elif op is c.CATEGORY:
            out.append(_pick(rng, [(c.CATEGORY, av)]))
        elif op is c.BRANCH:
            out.append(_generate(rng.choice(av[1]), rng, ignore_case))
        elif op is c.SUBPATTERN:
            flags = av[1]
            out.append(_generate(av[3], rng, ignore_case or bool(flags & re.IGNORECASE)))
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
            low, high, inner = av
            high = low + 24 if high is c.MAXREPEAT else high
            count = low + rng.randint(0, min(high - low, 6)) if low else 0
            out.extend(_generate(inner, rng, ignore_case) for _ in range(count))
        # anchors, lookarounds and back references produce nothing
    return "".join(out)


@cache
def _rules() -> list[dict[str, Any]]:
    data = resources.files("local_recall.redaction.rules").joinpath("betterleaks.json")
    rules: list[dict[str, Any]] = json.loads(data.read_text(encoding="utf-8"))["rules"]
    return rules


def _secret(pattern: re.Pattern[str], m: re.Match[str]) -> str:
    named = set(pattern.groupindex.values())
    groups = [g for g in range(1, pattern.groups + 1) if g not in named]
    group = next((g for g in groups if m.group(g)), 0)
    return m.group(group)


def _sample(rule: dict[str, Any], seed: int, *, keyword_inside: bool) -> tuple[str, str] | None:
    """(secret, what the rule's regex matched) or None. With `keyword_inside`, the match must
    hold one of the rule's keywords (Betterleaks, like us, runs a rule only near one); else the
    forms add the keyword around it ("the twilio key is SK...")."""
    regex = translate_regex(rule["regex"])
    pattern = re.compile(regex)
    parsed = _parser.parse(regex)
    rng = random.Random(f"{rule['id']}-{seed}")
    for _ in range(25):
        text = _generate(parsed, rng, bool(parsed.state.flags & re.IGNORECASE))
        m = pattern.search(text)
        if m is None:
            continue
        if keyword_inside and not any(k in m.group().lower() for k in rule["keywords"]):
            continue
        secret = _secret(pattern, m)
        if "password" in pattern.groupindex and m.group("password"):
            secret = m.group("password")
        if len(secret) < 8 or shannon_entropy(_secret(pattern, m)) <= rule["min_entropy"]:
            continue
        if re.search(r"\s", secret) or secret.lower() != secret.lower().strip("=-_."):
            continue
        return secret, m.group()
    return None


def _name(keyword: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", keyword).strip("_").upper() or "SERVICE"


def _forms(rule: dict[str, Any], secret: str, matched: str) -> dict[str, str]:
    """Each form's first wording in which the rule finds the secret, with one of its keywords
    present (Betterleaks, like us, runs a rule only near a keyword): the bare token, then the
    token named by its keyword, then the text the rule matched (a value it knows by context).
    A form no wording fits is left out (listed in INCOMPLETE)."""
    pattern = re.compile(translate_regex(rule["regex"]))
    keyword = rule["keywords"][0]
    name = _name(keyword)
    line = re.sub(r"(?:\\[nr]|[\s'\"`;])+$", "", matched.strip())
    setting = line if "=" in line else f"{name}_TOKEN={line}"
    wordings = {
        "env": [f"{name}_API_KEY={secret}", setting],
        "prose": [
            f"I rotated it yesterday; the new one is {secret} and the deploy works again.",
            f"The {keyword} key I rotated yesterday is {secret} and the deploy works again.",
            f"We configured it as {line} last week, and then the deploy worked again.",
        ],
        "code": [
            f'client = Client(api_key="{secret}", timeout=30)',
            f'{name.lower()}_client = Client(api_key="{secret}", timeout=30)',
            f"settings.update(raw={json.dumps(line)})",
        ],
    }
    found = {form: _first_found(pattern, rule, secret, texts) for form, texts in wordings.items()}
    forms = {form: text for form, text in found.items() if text is not None}
    if "env" in forms:
        content = f"$ cat .env\n{forms['env']}\nDEBUG=1\n"
        forms["tool"] = json.dumps({"type": "tool_result", "content": content}, ensure_ascii=False)
    return forms


def _first_found(
    pattern: re.Pattern[str], rule: dict[str, Any], secret: str, texts: list[str]
) -> str | None:
    for text in texts:
        lowered = text.lower()
        if secret in text and pattern.search(text) and any(k in lowered for k in rule["keywords"]):
            return text
    return None


def rule_samples() -> tuple[list[RuleSample], list[str], list[str]]:
    samples: list[RuleSample] = []
    unsatisfied: list[str] = []
    incomplete: list[str] = []
    for rule in _rules():
        tries = [(seed, inside) for inside in (True, False) for seed in range(2)]
        found = next(
            (s for seed, inside in tries if (s := _sample(rule, seed, keyword_inside=inside))), None
        )
        if found is None:
            unsatisfied.append(rule["id"])
            continue
        secret, matched = found
        forms = _forms(rule, secret, matched)
        if len(forms) < len(FORMS):
            incomplete.append(rule["id"])
        for form, text in forms.items():
            samples.append(RuleSample(rule["id"], rule["kind"], form, secret, text))
    return samples, unsatisfied, incomplete


RULE_SAMPLES, UNSATISFIED, INCOMPLETE = rule_samples()

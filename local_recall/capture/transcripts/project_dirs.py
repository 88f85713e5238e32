"""The folder names Claude Code gives a project under `<config>/projects/`, computed the way
Claude Code computes them. Pure: used by the collector (`discovery`) and the daemon's choice of
folders to watch (`daemon.schedule`)."""

from __future__ import annotations

from collections.abc import Sequence

# Claude Code 2.1.197 (bundled JS in the native binary; minified names `$E`, `fNu`, `jCe`):
#   function jCe(e){let t=0;for(let n=0;n<e.length;n++)t=(t<<5)-t+e.charCodeAt(n)|0;return t}
#   function $E(e){let t=e.replace(/[^a-zA-Z0-9]/g,"-");if(t.length<=200)return t;
#                   return`${t.slice(0,200)}-${Math.abs(jCe(e)).toString(36)}`}
# i.e. a Java-style 31-hash over the UTF-16 code units of the *original* path, as a signed
# 32-bit int, absolute value in base 36. Same finding: heiervang-technologies/unleash PR #237.
# Checked by running the CLI in long and non-ASCII directories (docs/pipeline.md#transcripts).
_MAX_ENCODED_LENGTH = 200
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def _js_string_hash(text: str) -> int:
    """`(h << 5) - h + charCodeAt(i) | 0` over UTF-16 code units, as JS computes it."""
    units = text.encode("utf-16-le", "surrogatepass")
    value = 0
    for i in range(0, len(units), 2):
        value = (value * 31 + (units[i] | units[i + 1] << 8)) & 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def _base36(number: int) -> str:
    digits = ""
    while True:
        number, rest = divmod(number, 36)
        digits = _BASE36[rest] + digits
        if number == 0:
            return digits


def _sanitize(path: str) -> str:
    # JS regexes without the `u` flag see UTF-16 code units: a character outside the BMP
    # (an emoji) is two units and so becomes two dashes.
    return "".join(
        ch if ch.isascii() and ch.isalnum() else ("--" if ord(ch) > 0xFFFF else "-") for ch in path
    )


def encode_project_dir(path: str) -> str:
    """The name Claude Code gives `<config>/projects/<name>` for sessions started in `path`."""
    sanitized = _sanitize(path)
    if len(sanitized) <= _MAX_ENCODED_LENGTH:
        return sanitized
    digest = _base36(abs(_js_string_hash(path)))
    return f"{sanitized[:_MAX_ENCODED_LENGTH]}-{digest}"


def candidate_prefix(root: str) -> str:
    """Directories of sessions started below `root` start with this.

    A subdirectory encodes to the root's encoding + "-" + more; past 200 characters only the
    first 200 survive, followed by "-<hash>" (Claude Code itself matches long paths on that
    prefix). Look-alikes (`/repo-other`, `/repo.other` and `/repo/other` all encode alike) are
    weeded out by the `cwd` recorded in the file."""
    return _sanitize(root)[:_MAX_ENCODED_LENGTH] + "-"


def may_hold_sessions(name: str, roots: Sequence[str]) -> bool:
    """Whether `<config>/projects/<name>` may hold sessions started in one of `roots` or below
    it: a root's encoding, or a subdirectory's (its prefix + "-"). Look-alikes are possible."""
    return any(
        name == encode_project_dir(root) or name.startswith(candidate_prefix(root))
        for root in roots
    )

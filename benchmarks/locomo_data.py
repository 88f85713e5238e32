"""The LoCoMo benchmark data: where the benchmarks find it, and the command that fetches it.

    python benchmarks/locomo_data.py              # download, check, write the dev conversations
    python benchmarks/locomo_data.py --zip FILE   # from a locomo10.zip you already have
    python benchmarks/locomo_data.py --out DIR    # elsewhere (then: --data DIR or $LOCOMO_DATA)

LoCoMo (Maharana et al., ACL 2024) is public in github.com/snap-research/locomo as
`data/locomo10.zip`: ten conversations, too big to commit here (2.9 MB unpacked) and not on a
package registry. This downloads that file at a pinned commit, refuses it unless its SHA-256 is
the one below, and writes the five development conversations (26, 30, 41, 42, 43) as
`conv-<id>.json` without their event-graph keys (`events_session_*`, unused here) into
benchmarks/data/locomo-dev/ (gitignored). The other five stay held out: tune on dev only.

Every LoCoMo benchmark reads its data from `--data DIR`, else `$LOCOMO_DATA`, else that folder,
and stops with this command in its message when none holds conv-*.json files.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import re
import sys
import urllib.request
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

COMMIT = "e76cdff4a04fce19090596d49862fe87a5c15aaa"
URL = f"https://raw.githubusercontent.com/snap-research/locomo/{COMMIT}/data/locomo10.zip"
SHA256 = "5c342973da4b45c12583c9fc7594d6410880f5aba2c491a0db09db262c906fb5"
DEV = ("26", "30", "41", "42", "43")
ENV = "LOCOMO_DATA"
DEFAULT_DIR = Path(__file__).resolve().parent / "data" / "locomo-dev"
FETCH = "python benchmarks/locomo_data.py"
_MEMBER = re.compile(r"(?:^|/)(\d+)\.json$")


def data_dir(given: Path | None = None) -> Path:
    """The folder to read: --data, else $LOCOMO_DATA, else benchmarks/data/locomo-dev/. Exits
    with a message saying how to get the data when it holds no conv-*.json file."""
    folder = given or (Path(os.environ[ENV]) if os.environ.get(ENV) else DEFAULT_DIR)
    if not any(folder.glob("conv-*.json")):
        raise SystemExit(
            f"LoCoMo data not found: no conv-*.json in {folder}. Fetch it with `{FETCH}` "
            f"(or pass --data DIR / set ${ENV}); see benchmarks/README.md."
        )
    return folder


def conversations(archive: bytes, wanted: Sequence[str] = DEV) -> dict[str, dict[str, Any]]:
    """conv-<id> -> the conversation, from locomo10.zip's bytes, event graphs dropped."""
    found: dict[str, dict[str, Any]] = {}
    with zipfile.ZipFile(io.BytesIO(archive)) as bundle:
        for name in bundle.namelist():
            match = _MEMBER.search(name)
            if match and match.group(1) in wanted:
                data = json.loads(bundle.read(name))
                found[f"conv-{match.group(1)}"] = {
                    k: v for k, v in data.items() if not k.startswith("events_session_")
                }
    missing = sorted(set(wanted) - {key.removeprefix("conv-") for key in found})
    if missing:
        raise SystemExit(f"locomo10.zip holds no conversation {', '.join(missing)}")
    return found


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--zip", type=Path, help="a local locomo10.zip instead of downloading")
    parser.add_argument("--out", type=Path, default=DEFAULT_DIR)
    args = parser.parse_args(argv)
    if args.zip:
        archive = args.zip.read_bytes()
    else:
        print(f"downloading {URL}", file=sys.stderr)
        with urllib.request.urlopen(URL, timeout=120) as response:
            archive = response.read()
    digest = hashlib.sha256(archive).hexdigest()
    if digest != SHA256:
        raise SystemExit(f"locomo10.zip has SHA-256 {digest}, expected {SHA256}: not written")
    args.out.mkdir(parents=True, exist_ok=True)
    for name, conversation in conversations(archive).items():
        (args.out / f"{name}.json").write_text(json.dumps(conversation), encoding="utf-8")
    print(f"wrote {len(DEV)} dev conversations to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()

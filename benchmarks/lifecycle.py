"""Staleness at scale: `local-recall stale`'s work for 10k memories anchored to 2k files in a repo
with 5k commits (issue target: <= 2 s cold, <= 100 ms when HEAD has not moved).

    .venv/bin/python benchmarks/lifecycle.py [--memories 10000] [--files 2000] [--commits 5000]

The repository is generated with `git fast-import` (a few files changed per commit, some renames
and deletions); memories are anchored to random files at random commits. "cold" = every git
command and the judgement; "warm" = HEAD unmoved: read the cached snapshot and check it is current.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from local_recall.lifecycle import git_facts, snapshot  # noqa: E402
from local_recall.memory.format import render_memory  # noqa: E402
from local_recall.memory.model import Memory, content_hash  # noqa: E402
from local_recall.recall import Recall  # noqa: E402
from local_recall.settings import Settings  # noqa: E402


def build_repo(repo: Path, files: int, commits: int, rng: random.Random) -> list[str]:
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    names = [f"src/pkg{i % 40}/module_{i}.py" for i in range(files)]
    contents = {name: [f"line {j}\n" for j in range(rng.randint(20, 400))] for name in names}
    stream: list[bytes] = []

    def blob(text: str) -> bytes:
        data = text.encode()
        return b"data %d\n%s\n" % (len(data), data)

    for n in range(commits):
        stream.append(b"commit refs/heads/main\n")
        stream.append(b"mark :%d\n" % (n + 1))
        stream.append(b"committer b <b@example.com> %d +0000\n" % (1_700_000_000 + n * 60))
        stream.append(blob(f"commit {n}"))
        if n:
            stream.append(b"from :%d\n" % n)
        if n == 0:
            for name in names:
                stream.append(f"M 100644 inline {name}\n".encode() + blob("".join(contents[name])))
        else:
            for _ in range(rng.randint(1, 4)):
                name = rng.choice(names)
                lines = contents[name]
                for _ in range(rng.randint(1, 15)):
                    lines.insert(rng.randrange(len(lines) + 1), f"edit {n}\n")
                stream.append(f"M 100644 inline {name}\n".encode() + blob("".join(lines)))
            if n % 97 == 0:  # an occasional rename
                old = rng.choice(names)
                new = old.replace(".py", f"_r{n}.py")
                stream.append(f"R {old} {new}\n".encode())
                names[names.index(old)] = new
                contents[new] = contents.pop(old)
            if n % 211 == 0 and len(names) > 10:  # and deletion
                gone = rng.choice(names)
                stream.append(f"D {gone}\n".encode())
                names.remove(gone)
                contents.pop(gone)
    subprocess.run(
        ["git", "-C", str(repo), "fast-import", "--quiet"], input=b"".join(stream), check=True
    )
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-f", "main"], check=True)
    out = subprocess.run(
        ["git", "-C", str(repo), "rev-list", "HEAD"], capture_output=True, text=True, check=True
    )
    return out.stdout.split()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--files", type=int, default=2_000)
    parser.add_argument("--commits", type=int, default=5_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        started = time.perf_counter()
        shas = build_repo(repo, args.files, args.commits, rng)
        print(f"built {len(shas)} commits in {time.perf_counter() - started:.1f} s")
        all_files = [
            line
            for line in subprocess.run(
                ["git", "-C", str(repo), "ls-files"], capture_output=True, text=True, check=True
            ).stdout.split()
        ]
        # Anchors as named when the memories were made: mostly files that exist now, some that
        # were renamed or deleted since (the first commit's names).
        first = subprocess.run(
            ["git", "-C", str(repo), "ls-tree", "-r", "--name-only", shas[-1]],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        gone = sorted(set(first) - set(all_files))
        anchor_pool = rng.sample(all_files, min(args.files, len(all_files)) - len(gone)) + gone
        memories = [
            snapshot.Provenanced(
                f"m{i}",
                rng.choice(shas),
                "main",
                tuple(rng.sample(anchor_pool, rng.randint(1, 3))),
            )
            for i in range(args.memories)
        ]
        cold = []
        for _ in range(args.runs):
            started = time.perf_counter()
            snap = snapshot.compute(repo, memories, threshold=0.5)
            cold.append(time.perf_counter() - started)
        path = Path(tmp) / "lifecycle.json"
        snapshot.save(path, snap)
        warm = []
        for _ in range(args.runs):
            started = time.perf_counter()
            state = git_facts.repo_state(repo)
            current = snapshot.is_current(snapshot.load(path), state, memories)
            warm.append(time.perf_counter() - started)
            assert current
        reasons: dict[str, int] = {}
        for stale in snap.stale.values():
            reasons[stale.reason] = reasons.get(stale.reason, 0) + 1
        load = os.getloadavg()[0]
        print(
            f"| snapshot: {args.memories:,} memories, {len(anchor_pool):,} anchor files, "
            f"{len(shas):,} commits | cold {statistics.median(cold):.2f} s "
            f"| HEAD unmoved {statistics.median(warm) * 1000:.0f} ms | stale: {reasons} "
            f"| load {load:.1f} |"
        )
        facade(repo, memories, args.runs)


def facade(repo: Path, memories: list[snapshot.Provenanced], runs: int) -> None:
    """The same through `Recall.stale_memories()` on real memory files (what `local-recall
    stale` runs, without the process start): cold = no saved snapshot, warm = HEAD unmoved."""
    recall = Recall.open(settings=Settings(root=repo, environ={}))
    recall.init()
    folder = recall.layout.episodic_dir
    start = datetime(2024, 1, 1, tzinfo=UTC)
    for n, m in enumerate(memories):
        memory_id = f"00000000-0000-4000-8000-{n:012d}"
        body = f"memory {n} about {', '.join(m.anchors)}"
        memory = Memory(
            id=memory_id,
            subject=f"memory {n}",
            body=body,
            keywords=(),
            applies_to="global",
            occurred_at=start,
            content_hash=content_hash(body),
            commit=m.commit,
            branch=m.branch,
            files=m.anchors,
        )
        (folder / f"{memory_id}.md").write_text(render_memory(memory), encoding="utf-8")
    recall.scan()  # the catalog, as any earlier command would have built it
    cold, warm = [], []
    for _ in range(runs):
        recall.lifecycle.snapshot_path.unlink(missing_ok=True)
        started = time.perf_counter()
        found = recall.stale_memories()
        cold.append(time.perf_counter() - started)
    for _ in range(runs):
        started = time.perf_counter()
        again = recall.stale_memories()
        warm.append(time.perf_counter() - started)
    assert len(again) == len(found)
    load = os.getloadavg()[0]
    print(
        f"| Recall.stale_memories(): {len(memories):,} memory files | cold "
        f"{statistics.median(cold):.2f} s | HEAD unmoved {statistics.median(warm) * 1000:.0f} ms "
        f"| {len(found):,} stale | load {load:.1f} |"
    )


if __name__ == "__main__":
    main()

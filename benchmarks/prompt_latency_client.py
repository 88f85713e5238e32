"""Candidate (b) of prompt_latency_candidates.py, a stand-in: the smallest Python command hook.

    <python> -S -I benchmarks/prompt_latency_client.py   (stdin: Claude Code's hook input)

No site-packages (-S), no environment (-I), json and socket only: reads the prompt, asks the
repository's daemon for the hook's whole answer over the unix socket (op `answer`, the path in
state/daemon.socket) and prints its text as hook context. It checks less than the real hook (no
session record, no check of the text's blocks) — it exists to measure what the interpreter's
start-up alone costs a prompt, which is why it was not adopted (docs/hooks.md).
"""

import json
import os
import socket
import sys

data = json.loads(sys.stdin.buffer.read(1 << 20) or b"{}")
root = os.environ.get("CLAUDE_PROJECT_DIR") or data.get("cwd") or "."
prompt = (data.get("prompt") or "")[:2000]
try:
    with open(os.path.join(root, "local-recall", "state", "daemon.socket")) as pointer:
        path = pointer.read().strip()
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.settimeout(0.3)
    client.connect(path)
    request = {"op": "answer", "kind": "prompt", "agent": "claude_code", "prompt": prompt}
    client.sendall(json.dumps(request).encode() + b"\n")
    reply = b""
    while not reply.endswith(b"\n"):
        chunk = client.recv(65536)
        if not chunk:
            break
        reply += chunk
    context = json.loads(reply).get("text")
    if context and isinstance(context, str):
        output = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit"}}
        output["hookSpecificOutput"]["additionalContext"] = context
        os.write(1, json.dumps(output).encode())
except (OSError, ValueError):
    pass
os._exit(0)

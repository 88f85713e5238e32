"""A real S3-compatible server on localhost for the org tests: moto's `moto_server` (the PyPI
package `moto[server]`, in the dev extra), started as a subprocess. No mock: LanceDB talks to
it over HTTP with signed requests, as it would to S3."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.waiting import Ceiling


@dataclass(frozen=True)
class S3Server:
    endpoint: str
    log: Path

    def env(self) -> dict[str, str]:
        """The standard AWS variables a user would set for this endpoint."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_REGION": "us-east-1",
            "AWS_ALLOW_HTTP": "true",
        }

    def client(self) -> Any:
        """A boto3 S3 client (boto3 comes with moto) for what a test does beside LanceDB."""
        import boto3

        env = self.env()
        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
            region_name=env["AWS_REGION"],
        )

    def create_bucket(self, name: str) -> None:
        self.client().create_bucket(Bucket=name)

    def request(self, method: str, path: str, data: bytes | None = None) -> bytes:
        request = urllib.request.Request(self.endpoint + path, data=data, method=method)
        with urllib.request.urlopen(request, timeout=30) as answer:
            return bytes(answer.read())


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def running_s3(log: Path) -> Iterator[S3Server]:
    port = free_port()
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    server = S3Server(f"http://127.0.0.1:{port}", log)
    try:
        ceiling = Ceiling()  # a busy 2-core machine imports moto slowly
        while True:
            try:
                server.request("GET", "/moto-api/")
                break
            except (urllib.error.URLError, ConnectionError, OSError):
                if process.poll() is not None or ceiling.passed():
                    raise RuntimeError(f"moto_server did not start: {log.read_text()}") from None
                time.sleep(0.2)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

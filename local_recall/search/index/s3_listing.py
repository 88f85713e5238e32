"""The tables under an s3:// URI, listed by pyarrow's S3 client when LanceDB's listing fails.

    names = s3_table_names("s3://bucket/org", options)   # None: not s3, or this failed too

LanceDB parses every object name of a listing and fails as a whole on one it cannot parse (a
folder named with a control character): one such folder in the org prefix, which anyone who may
write there can make, would hide every dataset. pyarrow lists the same prefix with the same
storage options (the credentials LanceDB was given, else the AWS SDK's own chain); the caller
checks each name (org/plan.py: usable_names) before opening any.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

_SUFFIX: Final = ".lance"


def s3_table_names(uri: str, options: Mapping[str, str]) -> list[str] | None:
    """The `<name>.lance` folders under `uri`, sorted; None when `uri` is not an s3 URI or the
    listing fails (the caller reports its own listing's error)."""
    scheme, sep, rest = uri.partition("://")
    if not sep or scheme not in ("s3", "s3+ddb"):
        return None
    prefix = rest.partition("?")[0].strip("/")
    try:
        import pyarrow.fs as pafs

        filesystem = pafs.S3FileSystem(**s3_arguments(options))
        found = filesystem.get_file_info(pafs.FileSelector(prefix, recursive=False))
    except Exception:  # any failure: the caller's own listing error stands
        return None
    return sorted(
        info.base_name.removesuffix(_SUFFIX)
        for info in found
        if info.type == pafs.FileType.Directory and info.base_name.endswith(_SUFFIX)
    )


def s3_arguments(options: Mapping[str, str]) -> dict[str, Any]:
    """pyarrow.fs.S3FileSystem's arguments from LanceDB's storage options (org/plan.py)."""
    found: dict[str, Any] = {}
    for option, argument in (
        ("aws_access_key_id", "access_key"),
        ("aws_secret_access_key", "secret_key"),
        ("aws_session_token", "session_token"),
        ("aws_region", "region"),
    ):
        if options.get(option):
            found[argument] = options[option]
    endpoint = options.get("aws_endpoint", "")
    if endpoint:
        scheme, sep, host = endpoint.partition("://")
        found["endpoint_override"] = host if sep else endpoint
        found["scheme"] = scheme if sep else "https"
    for option, argument in (
        ("connect_timeout", "connect_timeout"),
        ("timeout", "request_timeout"),
    ):
        seconds = _seconds(options.get(option, ""))
        if seconds is not None:
            found[argument] = seconds
    return found


def _seconds(text: str) -> float | None:
    """`"1500ms"` / `"2s"` / `"3"` → seconds; None for anything else."""
    value = text.strip().lower()
    scale = 1.0
    if value.endswith("ms"):
        value, scale = value[:-2], 0.001
    elif value.endswith("s"):
        value = value[:-1]
    try:
        return float(value) * scale
    except ValueError:
        return None

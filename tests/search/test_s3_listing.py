"""pyarrow's S3 arguments from LanceDB's storage options (search/index/s3_listing.py): literals."""

from __future__ import annotations

from local_recall.search.index.s3_listing import s3_arguments, s3_table_names


def test_storage_options_become_s3_filesystem_arguments() -> None:
    options = {
        "aws_endpoint": "http://127.0.0.1:9000",
        "aws_access_key_id": "k",
        "aws_secret_access_key": "s",
        "aws_region": "us-east-1",
        "allow_http": "true",
        "connect_timeout": "1500ms",
        "timeout": "5s",
    }
    assert s3_arguments(options) == {
        "access_key": "k",
        "secret_key": "s",
        "region": "us-east-1",
        "endpoint_override": "127.0.0.1:9000",
        "scheme": "http",
        "connect_timeout": 1.5,
        "request_timeout": 5.0,
    }
    assert s3_arguments({"timeout": "soon"}) == {}


def test_only_s3_uris_are_listed_this_way() -> None:
    assert s3_table_names("gs://bucket/org", {}) is None
    assert s3_table_names("/tmp/org", {}) is None

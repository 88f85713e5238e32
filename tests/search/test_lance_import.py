"""lancedb imported without its REST client's API classes (search/index/lance_import.py): a
fresh interpreter indexes and searches a real store on disk, and the API modules stay
unimported until something asks the package for them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import clean_env, git_init

SCRIPT = r"""
import os
import sys
from pathlib import Path

from local_recall.recall import Recall
from local_recall.search.query import SearchQuery
from local_recall.settings import Settings

recall = Recall.open(settings=Settings(root=Path(sys.argv[1]), environ=dict(os.environ)))
recall.init()
recall.add("Run the tests with tox", "tox -e py311 sets up the environment pytest needs.")
recall.sync_index()
hits = recall.query(SearchQuery("how do I run the tests"), sync=False).hits
assert hits and hits[0].memory.subject == "Run the tests with tox", hits
api = "lance_namespace_urllib3_client.api.table_api"
print("lancedb", "lancedb" in sys.modules, "api-before", api in sys.modules)
from lance_namespace_urllib3_client import ApiClient, TableApi  # the deferred __init__ runs

print("api-after", api in sys.modules, TableApi.__name__, ApiClient.__name__)
"""


def test_an_index_is_built_and_searched_without_the_rest_clients_api(tmp_path: Path) -> None:
    root = git_init(tmp_path / "repo")
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(root)],
        env=clean_env({"HOME": str(tmp_path / "home")}),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [
        "lancedb", "True", "api-before", "False", "api-after", "True", "TableApi", "ApiClient",
    ]  # fmt: skip

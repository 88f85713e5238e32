"""Org-wide memory: each repository's memories published to a shared LanceDB location (object
storage), searched beside the local index from any repository. docs/org.md.

    plan.py        pure: dataset names, what a publish changes, when a dataset is recreated,
                   the store's options from the environment, how org hits merge with local ones
    identity.py    the repository's remote URL, default branch and commit (git)
    rows.py        the datasets' Arrow columns and rows
    publish.py     `local-recall publish`: embed what changed, write it in one commit
    candidates.py  an org search's candidates, scored like local memories
    search.py      `search --org --live`: every readable dataset asked at once, one deadline
    mirror.py      `local-recall org pull`: the merged local copy (search --org, the hook)
    service.py     what the facade calls (`Recall.org`, `Recall.query(org=...)`)
"""

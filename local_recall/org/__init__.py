"""Org-wide memory: each repository's memories published to a shared LanceDB location (object
storage), searched beside the local index from any repository. docs/org.md.

    plan.py      pure: dataset names, what a publish changes, when a dataset is recreated,
                 the store's options from the environment, how org hits merge with local ones
    identity.py  the repository's remote URL, default branch and commit (git)
    rows.py      the datasets' Arrow columns and rows
    publish.py   `local-recall publish`: embed what changed, write it in one commit
    search.py    `search --org`: every readable dataset asked at once, within a deadline
    mirror.py    `local-recall org pull`: a local copy for the prompt hook
"""

"""A memory's life in a team's repository: provenance, review, staleness, branches, merging."""

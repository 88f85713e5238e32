"""The derived index and search over it: embedders, LanceDB, scoring."""

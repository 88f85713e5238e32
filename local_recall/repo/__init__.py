"""Where local-recall lives in a repository: layout, configuration, atomic files and locks."""

"""The GPU table's outputs: `ceilings show` and the `--ceilings` template."""

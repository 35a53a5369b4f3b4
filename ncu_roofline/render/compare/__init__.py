"""A comparison's outputs: before -> after chart, terminal table, Markdown, JSON."""

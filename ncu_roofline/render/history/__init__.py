"""A history's outputs: trend chart, terminal table, Markdown, JSON."""

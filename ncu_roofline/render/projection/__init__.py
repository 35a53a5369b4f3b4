"""Outputs of `project`: terminal table, Markdown, JSON, Parquet and the chart of projected points."""

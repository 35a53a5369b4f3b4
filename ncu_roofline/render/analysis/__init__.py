"""One run's outputs: the roofline chart, terminal table, Markdown, JSON, drill-down."""

"""Analytic points' outputs: the model chart, terminal table, JSON."""

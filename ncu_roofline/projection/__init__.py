"""A measured profile projected onto other GPUs' roofs (project.py; docs/projection.md)."""

"""Renderers: turn the ranked tables into charts, tables and files; they know nothing of ncu."""

"""Roofs as data: the built-in GPU table, users' ceilings files, peaks and ridge points."""

"""The roofline pipeline over one table: validate, derive, roofs, speed of light, group, rank, notes."""

"""Two runs matched kernel by kernel: the library half of `compare`, over plain tables."""

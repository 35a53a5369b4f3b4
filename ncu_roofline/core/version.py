"""The tool's version, written into every output's metadata; its own module so that no layer imports the package."""

__version__ = "0.1.0"

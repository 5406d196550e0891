"""syndicator: a polite feed aggregator that builds a static planet site."""

#: The release; pyproject.toml reads it from here.
__version__ = "0.1.0"

"""syndicator: a polite feed aggregator that builds a static planet site."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("syndicator")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0"

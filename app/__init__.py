"""tmdns: an authoritative DNS traffic manager."""

__version__ = "0.1.0"

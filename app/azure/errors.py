"""AzureError, raised for input no profile can be read from; checks nothing itself."""

from __future__ import annotations


class AzureError(ValueError):
    """The input is not something a Traffic Manager profile can be read from."""

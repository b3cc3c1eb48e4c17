"""TransferError, raised for an unusable document; no checks are made here."""

from __future__ import annotations

from collections.abc import Sequence


class TransferError(ValueError):
    """The document cannot be used; one `file:line:col: field: message` per error."""

    def __init__(self, errors: str | Sequence[str]) -> None:
        self.errors = (errors,) if isinstance(errors, str) else tuple(errors)
        super().__init__("\n".join(self.errors))

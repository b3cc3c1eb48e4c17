"""Persistence behind a small interface; SQLAlchemy never leaves this package."""

from app.domain.validation import Invalid
from app.store.base import Conflict, NotFound, Store, StoreUnavailable
from app.store.sql import SqlStore

__all__ = ["Conflict", "Invalid", "NotFound", "SqlStore", "Store", "StoreUnavailable"]

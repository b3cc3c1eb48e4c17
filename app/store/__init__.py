"""Persistence behind a small interface; SQLAlchemy never leaves this package."""

from app.store.base import Conflict, Invalid, NotFound, Store, StoreUnavailable
from app.store.sql import SqlStore

__all__ = ["Conflict", "Invalid", "NotFound", "SqlStore", "Store", "StoreUnavailable"]

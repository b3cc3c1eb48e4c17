"""Configuration as code: export and import as YAML/JSON. Re-exports only, no logic."""

from app.transfer.changes import Change, apply_plan, config_problems, plan
from app.transfer.document import dump, export_document, format_of, profile_entry
from app.transfer.errors import TransferError
from app.transfer.loading import load
from app.transfer.model import VERSION, Document, Format, ZoneEntry, is_reference
from app.transfer.wording import describe

__all__ = [
    "VERSION",
    "Change",
    "Document",
    "Format",
    "TransferError",
    "ZoneEntry",
    "apply_plan",
    "config_problems",
    "describe",
    "dump",
    "export_document",
    "format_of",
    "is_reference",
    "load",
    "plan",
    "profile_entry",
]

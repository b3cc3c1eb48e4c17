"""Domain values as plain JSON data: for the audit log, the store's JSON
columns and the local snapshot file alike."""

from __future__ import annotations

import base64
import dataclasses
import enum
from collections.abc import Mapping
from ipaddress import IPv4Address, IPv6Address
from typing import Any


def plain(value: Any) -> Any:
    """Dataclasses as objects, enums and addresses as their text, tuples as
    arrays, mapping keys as strings, octets (a static record's wire form) as
    base64; the rest as it is."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)
        }
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, IPv4Address | IPv6Address):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [plain(v) for v in value]
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    return value

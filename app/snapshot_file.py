"""The last good configuration on local disk, so a DNS instance that starts
while the database is unreachable still answers.

The file is JSON: a header (format name, version) and a payload (generation,
configuration, health) with a SHA-256 checksum of the payload. It is written
to a temporary file, flushed and renamed over the old one, so a crash leaves
the old file or the new one, never half of either. A file that is corrupt,
of another version or not ours is ignored with one log line.
"""

from __future__ import annotations

import base64
import dataclasses
import enum
import hashlib
import json
import logging
import os
import types
from collections.abc import Mapping
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv6Address, ip_address
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints

from app.domain.model import Config, Health
from app.domain.plain import plain

log = logging.getLogger(__name__)

FORMAT = "tmdns-snapshot"
VERSION = 1


@dataclass(frozen=True, slots=True)
class Saved:
    generation: int
    written_at: float
    config: Config
    health: Mapping[int, Health]


def write(path: Path, saved: Saved) -> None:
    """Atomically replace `path` with `saved`."""
    payload = {
        "generation": saved.generation,
        "written_at": saved.written_at,
        # What could not be read is not kept: it is read (and judged) again.
        "config": plain(dataclasses.replace(saved.config, broken={})),
        "health": plain(dict(saved.health)),
    }
    text = _canonical(payload)
    document = {
        "format": FORMAT,
        "version": VERSION,
        "checksum": "sha256:" + hashlib.sha256(text.encode()).hexdigest(),
        "payload": payload,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with temporary.open("w", encoding="utf-8") as out:
        json.dump(document, out, separators=(",", ":"))
        out.flush()
        os.fsync(out.fileno())
    temporary.replace(path)


def read(path: Path) -> Saved | None:
    """The saved configuration, or None (with one log line saying why)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        log.warning("no snapshot file at %s", path)
        return None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        log.error("ignoring snapshot file %s: unreadable (%s)", path, exc)
        return None
    why = _refusal(document)
    if why is not None:
        log.error("ignoring snapshot file %s: %s", path, why)
        return None
    payload = document["payload"]
    try:
        return Saved(
            int(payload["generation"]),
            float(payload["written_at"]),
            from_plain(Config, payload["config"]),
            from_plain(Mapping[int, Health], payload["health"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        log.error("ignoring snapshot file %s: bad content (%s)", path, exc)
        return None


def _refusal(document: Any) -> str | None:
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        return "not a tmdns snapshot file"
    if document.get("version") != VERSION:
        return f"version {document.get('version')!r}, this tmdns reads {VERSION}"
    payload = document.get("payload")
    expected = "sha256:" + hashlib.sha256(_canonical(payload).encode()).hexdigest()
    if document.get("checksum") != expected:
        return "checksum mismatch (corrupt or edited)"
    return None


def _canonical(payload: Any) -> str:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"))


def from_plain(kind: Any, value: Any) -> Any:
    """The inverse of `plain`, led by the type hints of the domain classes."""
    origin, args = get_origin(kind), get_args(kind)
    if origin in (Union, types.UnionType):
        return _one_of(args, value)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(from_plain(args[0], v) for v in value)
        return tuple(from_plain(a, v) for a, v in zip(args, value, strict=True))
    if origin in (Mapping, dict):
        return {
            from_plain(args[0], k): from_plain(args[1], v) for k, v in value.items()
        }
    if dataclasses.is_dataclass(kind) and isinstance(kind, type):
        hints = get_type_hints(kind)
        fields = {
            f.name: from_plain(hints[f.name], value[f.name])
            for f in dataclasses.fields(kind)
            if f.name in value
        }
        return kind(**fields)
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return kind(value)
    if kind in (IPv4Address, IPv6Address):
        return ip_address(value)
    if kind is Any:
        return value
    if kind is bytes:
        return base64.b64decode(value, validate=True)
    if kind in (int, float, str, bool):
        if kind is bool and not isinstance(value, bool):
            raise TypeError(f"expected a boolean, got {value!r}")
        return kind(value)
    raise TypeError(f"cannot decode {kind}")


def _one_of(choices: tuple[Any, ...], value: Any) -> Any:
    """`X | None`, and the one union of two classes the model has: an address."""
    if value is None and type(None) in choices:
        return None
    kinds = [c for c in choices if c is not type(None)]
    if set(kinds) == {IPv4Address, IPv6Address}:
        return ip_address(value)
    if len(kinds) == 1:
        return from_plain(kinds[0], value)
    raise TypeError(f"cannot decode a value of {choices}")

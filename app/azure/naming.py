"""Azure resource names → DNS labels and profile names; reports nothing."""

from __future__ import annotations

import re


def label(text: str) -> str:
    """One DNS label from an Azure name: lowercase, other characters as '-'."""
    cleaned = re.sub(r"[^a-z0-9_-]+", "-", text.lower()).strip("-_")
    return cleaned[:63].rstrip("-_") or "endpoint"


def profile_name(azure_name: str) -> str:
    """The tmdns profile name of an Azure profile (and of a nested child)."""
    labels = [label(part) for part in azure_name.split(".") if part]
    return ".".join(labels) or "profile"

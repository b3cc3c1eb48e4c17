"""The sample zone several DNS tests build over the API: `tm.example.` with an
in-zone name server, and a priority profile `app` publishing SIP over UDP and
TLS from three endpoints (two IPv4, one IPv6)."""

from __future__ import annotations

from typing import Any

ZONE: dict[str, Any] = {
    "name": "tm.example.",
    "ns": ["ns1.tm.example."],
    "glue": {"ns1.tm.example.": ["127.0.0.1"]},
}
APP: dict[str, Any] = {
    "name": "app",
    "method": "priority",
    "monitor": {"protocol": "none"},
    "srv": [
        {"service": "_sip._udp", "port": 5060},
        {"service": "_sip._tls", "port": 5061},
    ],
    "endpoints": [
        {"name": "primary", "address": "127.0.0.1"},
        {"name": "secondary", "address": "127.0.0.2"},
        {"name": "six", "address": "::1"},
    ],
}

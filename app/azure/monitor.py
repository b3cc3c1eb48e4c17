"""Azure monitorConfig and custom headers → a tmdns monitor; reads no endpoints."""

from __future__ import annotations

from typing import Any

from app.azure.notes import Notes

_PROTOCOLS = {"HTTP": "http", "HTTPS": "https", "TCP": "tcp"}
_MONITOR_FIELDS = frozenset(
    {
        "profileMonitorStatus",
        "protocol",
        "port",
        "path",
        "intervalInSeconds",
        "timeoutInSeconds",
        "toleratedNumberOfFailures",
        "customHeaders",
        "expectedStatusCodeRanges",
    }
)


def monitor_of(config: dict[str, Any], where: str, notes: Notes) -> dict[str, Any]:
    """A profile's monitorConfig as a monitor body (empty when there is none)."""
    monitor: dict[str, Any] = {}
    if not config:
        return monitor
    protocol = str(config.get("protocol") or "").upper()
    if protocol:
        if protocol in _PROTOCOLS:
            monitor["protocol"] = _PROTOCOLS[protocol]
        else:
            notes.note(where, f"monitorConfig.protocol {protocol!r} is not mapped")
    if config.get("port") is not None:
        monitor["port"] = config["port"]
    if protocol in ("HTTP", "HTTPS") and config.get("path"):
        monitor["path"] = config["path"]
    interval = config.get("intervalInSeconds")
    if interval is not None:
        monitor["interval"] = interval
    if config.get("timeoutInSeconds") is not None:
        monitor["timeout"] = config["timeoutInSeconds"]
    elif isinstance(interval, int | float) and interval <= 10:
        monitor["timeout"] = max(interval - 1, 1)  # Azure's most for 10 s: 9 s
    if config.get("toleratedNumberOfFailures") is not None:
        monitor["tolerated_failures"] = config["toleratedNumberOfFailures"]
    add_headers(config.get("customHeaders"), monitor, where, notes)
    ranges = config.get("expectedStatusCodeRanges") or []
    if ranges and protocol in ("HTTP", "HTTPS"):
        monitor["expected_status"] = _status_ranges(ranges)
    notes.unknown(config, _MONITOR_FIELDS, f"{where} monitorConfig")
    return monitor


def _status_ranges(ranges: list[Any]) -> str:
    """Azure's expectedStatusCodeRanges as `200,301-302`."""
    return ",".join(
        str(r.get("min"))
        if r.get("min") == r.get("max")
        else f"{r.get('min')}-{r.get('max')}"
        for r in ranges
    )


def add_headers(
    headers: Any, monitor: dict[str, Any], where: str, notes: Notes
) -> None:
    """Azure's custom headers: `host` is the monitor's host, the rest headers."""
    for header in headers or []:
        name, value = str(header.get("name") or ""), header.get("value")
        if not name or value is None:
            notes.note(where, f"custom header {header} is incomplete")
        elif name.lower() == "host":
            monitor["host"] = str(value)
        else:
            monitor["headers"] = {**monitor.get("headers", {}), name: str(value)}

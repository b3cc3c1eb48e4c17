"""Settings: defaults, then an optional TOML file, then TMDNS_* variables, then flags.

Built once by the command line and passed down; nothing reads it at import.
"""

from __future__ import annotations

import re
import socket
from enum import StrEnum
from ipaddress import ip_network
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, Field, IPvAnyAddress, SecretStr, field_validator
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

DEFAULT_DB_URL = "sqlite:///var/tmdns.db"


class Role(StrEnum):
    ALL = "all"
    DNS = "dns"
    API = "api"
    PROBER = "prober"


def comma_list(value: object) -> object:
    """A variable's "a, b,c" as ["a", "b", "c"]; anything else as it is."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


def split_hostport(text: str) -> tuple[str, int]:
    """`127.0.0.1:8053` or `[::1]:8053` → (host, port)."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{text!r} is not HOST:PORT")
    return host.strip("[]") or "127.0.0.1", int(port)


class RrlSettings(BaseModel):
    """Response rate limiting on UDP (app/dns/ratelimit.py). On the open
    internet set `rate` to 20: far above what resolvers ask for one name from
    one network (answers live 60 s in their caches), far below a flood."""

    # Replies per second per client netblock (/24, /56) and response class; 0: off.
    rate: int = Field(default=0, ge=0, le=1_000_000)
    # Every Nth limited reply goes out empty with TC=1 (a resolver retries over
    # TCP); 0: all limited replies are dropped.
    slip: int = Field(default=2, ge=0, le=100)
    # Networks never limited, e.g. "10.0.0.0/8,192.0.2.53".
    exempt: Annotated[list[str], NoDecode] = []

    @field_validator("exempt", mode="before")
    @classmethod
    def _networks(cls, value: object) -> object:
        return network_list(value)


def network_list(value: object) -> object:
    """A comma-separated list of addresses or networks, each checked."""
    value = comma_list(value)
    if isinstance(value, list):
        for item in value:
            try:
                ip_network(str(item), strict=False)
            except ValueError:
                raise ValueError(f"{item!r} is not an address or network") from None
    return value


class DnsSettings(BaseModel):
    # One or more addresses, e.g. "0.0.0.0:53,[::]:53"; UDP and TCP on each.
    listen: Annotated[list[str], NoDecode] = ["127.0.0.1:8053"]
    tcp_idle_timeout: float = Field(default=10.0, gt=0)
    max_tcp_connections: int = Field(default=256, ge=1)
    # Fair TCP: connections one client address may hold at once, and how long
    # a new connection has to send its first query.
    max_tcp_per_client: int = Field(default=16, ge=1)
    tcp_first_message_timeout: float = Field(default=3.0, gt=0)
    rrl: RrlSettings = RrlSettings()
    # Worker processes answering DNS on the same addresses (SO_REUSEPORT); each
    # follows the database's generation itself.
    workers: int = Field(default=1, ge=1, le=64)
    reuse_port: bool = False
    # The last good configuration, served when the database is unreachable at
    # start. None: beside the SQLite file, or var/ for PostgreSQL; "": none.
    snapshot_file: str | None = None
    # Who answered, for a query that asks (RFC 5001 NSID, `dig +nsid`): a
    # short printable name per instance of a fleet. None: not sent.
    nsid: str | None = Field(default=None, max_length=128, pattern=r"^[ -~]+$")
    # DNS cookies (RFC 7873/9018): 16 octets in hex, the same on every instance
    # of a fleet; the previous one is still accepted while a new one rolls
    # out. None: a random secret per process (cookies work, per instance).
    cookie_secret: SecretStr | None = None
    cookie_secret_previous: SecretStr | None = None
    # Answer from pre-encoded replies where one fits (app.dns.wirecache). Off,
    # every query is decoded, decided and encoded anew: the same answers,
    # slower; for telling a stored reply from a decision when in doubt.
    fast_path: bool = True
    # How often each DNS process adds its answer counts to the database, for
    # the dashboard's per-minute charts (app.traffic).
    traffic_interval: float = Field(default=10.0, gt=0, le=60)
    # Count queries for /metrics and the traffic charts. Off only to measure
    # what counting costs (`make bench`): the counters then stay at zero.
    query_metrics: bool = True

    @field_validator("cookie_secret", "cookie_secret_previous")
    @classmethod
    def _sixteen_octets(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not re.fullmatch(
            r"[0-9a-fA-F]{32}", value.get_secret_value()
        ):
            raise ValueError("a cookie secret is 32 hexadecimal digits (16 octets)")
        return value

    @field_validator("listen", mode="before")
    @classmethod
    def _hostports(cls, value: object) -> object:
        value = comma_list(value)
        if isinstance(value, list):
            for item in value:
                split_hostport(str(item))
        return value


class ApiSettings(BaseModel):
    listen: str = "127.0.0.1:8080"  # loopback unless configured
    tls_certificate: Path | None = None  # both set: the API speaks HTTPS only
    tls_key: Path | None = None
    cors_origins: list[str] = []  # browsers from these origins may call the API
    # Slow clients (app/api/listener.py): a request's header, and then its
    # body, must arrive within read_timeout seconds; an idle keep-alive
    # connection is closed after keepalive_timeout; one client address holds
    # at most max_connections_per_client connections.
    read_timeout: float = Field(default=10.0, gt=0, le=300)
    keepalive_timeout: float = Field(default=15.0, gt=0, le=3600)
    max_connections_per_client: int = Field(default=32, ge=1)
    # Where webhooks may point, e.g. "10.20.0.0/16": set, a webhook URL must
    # name an address inside (no host names, so nothing is looked up); empty,
    # any http(s) URL. The API host fetches them: this keeps an API token from
    # reaching what only that host may reach.
    webhook_networks: Annotated[list[str], NoDecode] = []

    @field_validator("webhook_networks", mode="before")
    @classmethod
    def _webhook_networks(cls, value: object) -> object:
        return network_list(value)

    @field_validator("listen")
    @classmethod
    def _hostport(cls, value: str) -> str:
        split_hostport(value)
        return value


class DbSettings(BaseModel):
    url: str = DEFAULT_DB_URL


class MetricsSettings(BaseModel):
    # A listener for /healthz and /metrics alone, for any role; None: only on
    # the API port (when this process serves the API).
    listen: str | None = None

    @field_validator("listen")
    @classmethod
    def _hostport(cls, value: str | None) -> str | None:
        if value:
            split_hostport(value)
        return value or None


class HealthzSettings(BaseModel):
    # /healthz is 503 once the snapshot has not been confirmed current, or the
    # database has been unreachable, for longer than this many seconds.
    max_lag: float = Field(default=10.0, gt=0)


class GeoIpSettings(BaseModel):
    # A MaxMind DB file (GeoLite2-City or DB-IP City Lite); None: the bundled one.
    database: Path | None = None


def _host_name() -> str:
    return socket.gethostname()[:100] or "prober"


class ProberSettings(BaseModel):
    # Several probers (in other regions, say) each name their vantage; an
    # endpoint's state is decided over the live ones by its monitor's quorum.
    vantage: str = Field(
        default_factory=_host_name,
        min_length=1,
        max_length=100,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$",
    )
    concurrency: int = Field(default=256, ge=1, le=10_000)
    transition_retention_days: float = Field(default=30.0, gt=0)
    # Probes leave from this local address (a multi-homed prober, or a
    # firewall that lets health checks in from one address only); targets of
    # the other address family are probed from the default one.
    source_address: IPvAnyAddress | None = None


class EventLoop(StrEnum):
    """uvloop answers about 40 % more DNS queries per second than asyncio's
    own loop on one core (measured with dnsperf, docs/benchmarks.md); `asyncio` is there
    to rule the loop out when chasing a problem."""

    UVLOOP = "uvloop"
    ASYNCIO = "asyncio"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="TMDNS_", env_nested_delimiter="__", extra="forbid"
    )

    role: Role = Role.ALL
    dns: DnsSettings = DnsSettings()
    api: ApiSettings = ApiSettings()
    db: DbSettings = DbSettings()
    prober: ProberSettings = ProberSettings()
    geoip: GeoIpSettings = GeoIpSettings()
    metrics: MetricsSettings = MetricsSettings()
    healthz: HealthzSettings = HealthzSettings()
    bootstrap_token: SecretStr | None = None
    refresh_interval: float = Field(default=0.2, gt=0, le=1.0)
    event_loop: EventLoop = EventLoop.UVLOOP
    log_level: str = "INFO"
    config_file: Path | None = None

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        path = _config_file(init_settings(), env_settings())
        if path is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=path))
        return tuple(sources)


def _config_file(*layers: dict[str, Any]) -> Path | None:
    """The TOML file named by `--config` or TMDNS_CONFIG_FILE, if any."""
    for layer in layers:
        if layer.get("config_file"):
            path = Path(layer["config_file"])
            if not path.is_file():
                raise FileNotFoundError(f"config file {path} does not exist")
            return path
    return None

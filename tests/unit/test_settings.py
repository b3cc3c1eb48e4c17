import socket
from pathlib import Path

import pytest
from pydantic import ValidationError

from app.cli import build_parser, overrides_from
from app.settings import EventLoop, Role, Settings, split_hostport
from app.store.engine import async_url


def test_defaults_are_the_documented_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TMDNS_DB__URL", "TMDNS_BOOTSTRAP_TOKEN", "TMDNS_CONFIG_FILE"):
        monkeypatch.delenv(name, raising=False)
    settings = Settings()
    assert settings.role is Role.ALL
    assert settings.dns.listen == ["127.0.0.1:8053"]
    assert settings.api.listen == "127.0.0.1:8080"
    assert settings.db.url == "sqlite:///var/tmdns.db"
    assert settings.bootstrap_token is None
    assert settings.event_loop is EventLoop.UVLOOP


def test_flags_beat_environment_which_beats_the_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "tmdns.toml"
    config.write_text(
        '[dns]\nlisten = "127.0.0.1:5300"\n[api]\nlisten = "127.0.0.1:9000"\n'
        '[db]\nurl = "sqlite:///from-file.db"\n'
    )
    monkeypatch.setenv("TMDNS_API__LISTEN", "127.0.0.1:9100")
    monkeypatch.setenv("TMDNS_DB__URL", "sqlite:///from-env.db")
    args = build_parser().parse_args(
        ["--config", str(config), "--db", "sqlite:///from-flag.db", "serve"]
    )
    settings = Settings(**overrides_from(args))
    assert settings.dns.listen == ["127.0.0.1:5300"]
    assert settings.api.listen == "127.0.0.1:9100"
    assert settings.db.url == "sqlite:///from-flag.db"


def test_an_unknown_event_loop_is_refused_by_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TMDNS_EVENT_LOOP", "tokio")
    with pytest.raises(ValidationError, match="event_loop"):
        Settings()


def test_a_bad_listen_address_is_refused() -> None:
    with pytest.raises(ValidationError, match="HOST:PORT"):
        Settings(dns={"listen": "localhost"})


def test_a_missing_config_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        Settings(config_file=tmp_path / "absent.toml")


@pytest.mark.parametrize(
    ("given", "expected"),
    [("127.0.0.1:53", ("127.0.0.1", 53)), ("[::1]:8053", ("::1", 8053))],
)
def test_host_and_port_split(given: str, expected: tuple[str, int]) -> None:
    assert split_hostport(given) == expected


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("sqlite:///var/tmdns.db", "sqlite+aiosqlite:///var/tmdns.db"),
        ("postgresql://u:p@db/tm", "postgresql+asyncpg://u:p@db/tm"),
        ("postgresql+asyncpg://db/tm", "postgresql+asyncpg://db/tm"),
    ],
)
def test_plain_database_urls_get_async_drivers(given: str, expected: str) -> None:
    assert async_url(given) == expected


def test_rrl_is_off_by_default_and_set_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert Settings().dns.rrl.rate == 0
    monkeypatch.setenv("TMDNS_DNS__RRL__RATE", "20")
    monkeypatch.setenv("TMDNS_DNS__RRL__SLIP", "3")
    monkeypatch.setenv("TMDNS_DNS__RRL__EXEMPT", "10.0.0.0/8, 192.0.2.53")
    rrl = Settings().dns.rrl
    assert (rrl.rate, rrl.slip, rrl.exempt) == (20, 3, ["10.0.0.0/8", "192.0.2.53"])


def test_the_fast_path_is_on_unless_switched_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert Settings().dns.fast_path is True
    monkeypatch.setenv("TMDNS_DNS__FAST_PATH", "false")
    assert Settings().dns.fast_path is False


def test_a_bad_rrl_exempt_network_is_refused_by_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TMDNS_DNS__RRL__EXEMPT", "10.0.0.0/33")
    with pytest.raises(ValidationError, match=r"rrl\.exempt[\s\S]*10\.0\.0\.0/33"):
        Settings()


def test_the_vantage_is_the_host_name_unless_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert Settings().prober.vantage == socket.gethostname()
    monkeypatch.setenv("TMDNS_PROBER__VANTAGE", "eu-west.1")
    assert Settings().prober.vantage == "eu-west.1"
    monkeypatch.setenv("TMDNS_PROBER__VANTAGE", "eu west; drop")
    with pytest.raises(ValidationError, match=r"prober\.vantage"):
        Settings()

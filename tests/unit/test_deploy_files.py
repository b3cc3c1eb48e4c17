"""The deployment files (deploy/) against the program they deploy.

A mistake in these files shows only when someone deploys: an unknown TMDNS_*
variable is silently ignored, a wrong role or subcommand fails as the
container or unit starts, a wrong start order migrates too late. So these
tests read compose.yaml, the Dockerfile, the environment example and the
systemd units the way docker compose, docker build and systemd do, hand each
command to the real argument parser (app.cli.build_parser) and each
environment to the real Settings, and check what deploy/README.md tells
people to run against what the files do.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml
from pydantic import BaseModel
from sqlalchemy.engine import make_url

from app.cli import build_parser, cmd_migrate, cmd_serve, overrides_from
from app.settings import Role, Settings, split_hostport
from app.store.engine import sqlite_file
from tests.conftest import require
from tests.e2e.test_faults import TOPOLOGY

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
COMPOSE = DEPLOY / "compose.yaml"
DOCKERFILE = DEPLOY / "Dockerfile"
ENV_EXAMPLE = DEPLOY / "tmdns.env.example"
README = DEPLOY / "README.md"
ROLE_UNIT = DEPLOY / "systemd" / "tmdns@.service"
MIGRATE_UNIT = DEPLOY / "systemd" / "tmdns-migrate.service"
UNITS = (ROLE_UNIT, MIGRATE_UNIT)
DEPLOY_FILES = (COMPOSE, DOCKERFILE, ENV_EXAMPLE, README, *UNITS)

# What the operator exports before `docker compose up` (compose.yaml's header).
OPERATOR = {"TMDNS_BOOTSTRAP_TOKEN": "a-long-random-secret-from-the-operator"}
SETTING_NAME = re.compile(r"\bTMDNS_[A-Z0-9_]*[A-Z0-9]")
LOOPBACK = ("127.0.0.1", "localhost", "::1")


# ---- the settings that exist ----------------------------------------------------


def setting_names(model: type[BaseModel], prefix: str, delimiter: str) -> set[str]:
    """Every environment variable Settings reads: a leaf field's path, upper
    case, joined by the nesting delimiter (TMDNS_DNS__RRL__RATE)."""
    names: set[str] = set()
    for name, field in model.model_fields.items():
        key = prefix + name.upper()
        kind = field.annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            names |= setting_names(kind, key + delimiter, delimiter)
        else:
            names.add(key)
    return names


PREFIX = str(Settings.model_config.get("env_prefix", "")).upper()
DELIMITER = str(Settings.model_config.get("env_nested_delimiter") or "")
SETTINGS = setting_names(Settings, PREFIX, DELIMITER)


def settings_from(
    env: Mapping[str, str],
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str] | None = None,
) -> Settings:
    """Settings as the process would build them: this environment alone (none
    of the test runner's TMDNS_*), then the command line's flags."""
    for name in list(os.environ):
        if name.upper().startswith(PREFIX):
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    overrides = overrides_from(build_parser().parse_args(argv or ["serve"]))
    return Settings(**overrides)


def test_the_setting_names_are_the_ones_settings_reads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The walk above agrees with pydantic-settings, nesting included."""
    assert PREFIX == "TMDNS_"
    assert DELIMITER == "__"
    assert {"TMDNS_DB__URL", "TMDNS_BOOTSTRAP_TOKEN"} <= SETTINGS
    assert "TMDNS_DNS__RRL__RATE" in SETTINGS  # two levels deep
    assert "TMDNS_DB" not in SETTINGS  # a group, not a setting
    settings = settings_from(
        {"TMDNS_DB__URL": "sqlite:///x.db", "TMDNS_DNS__RRL__RATE": "20"}, monkeypatch
    )
    assert settings.db.url == "sqlite:///x.db"
    assert settings.dns.rrl.rate == 20


@pytest.mark.parametrize("path", DEPLOY_FILES, ids=lambda p: p.name)
def test_every_tmdns_variable_named_is_a_real_setting(path: Path) -> None:
    """A misspelt TMDNS_* variable would be ignored without a word."""
    named = set(SETTING_NAME.findall(path.read_text(encoding="utf-8")))
    assert named, f"{path.name} names no setting at all"
    assert named - SETTINGS == set(), f"{path.name}: not settings"


# ---- the environment example ----------------------------------------------------


def env_file(path: Path) -> dict[str, str]:
    """The assignments of a systemd EnvironmentFile (comments skipped)."""
    found: dict[str, str] = {}
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if line and not line.startswith(("#", ";")):
            name, sep, value = line.partition("=")
            assert sep, f"{path.name}: {line!r} is no NAME=value"
            found[name.strip()] = value.strip().strip("\"'")
    return found


def test_the_environment_example_is_valid_as_it_stands(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Copied to /etc/tmdns/tmdns.env unchanged, every role starts with it."""
    example = env_file(ENV_EXAMPLE)
    for role in Role:
        settings = settings_from(example, monkeypatch, ["serve", "--role", role])
        assert settings.role is role
    assert settings.dns.listen == ["0.0.0.0:53"]


# ---- compose.yaml ---------------------------------------------------------------

VARIABLE = re.compile(r"\$\{(?P<name>\w+)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\}")


class MissingVariable(KeyError):
    """What `${NAME:?message}` makes compose refuse to start with."""


def interpolate(text: str, given: Mapping[str, str]) -> str:
    """Compose's ${NAME}, ${NAME:-default} and ${NAME:?error}."""

    def one(match: re.Match[str]) -> str:
        name, op, arg = match["name"], match["op"], match["arg"]
        if given.get(name):
            return given[name]
        if op in (":-", "-"):
            return str(arg)
        if op in (":?", "?"):
            raise MissingVariable(f"{name}: {arg}")
        return ""

    return VARIABLE.sub(one, text)


def load_compose(given: Mapping[str, str] = OPERATOR) -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(
        interpolate(COMPOSE.read_text(encoding="utf-8"), given)
    )
    return document


def raw_compose() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    return document


def mapping(value: Any) -> dict[str, str]:
    """Compose's environment as a mapping or as a list of NAME=value."""
    if isinstance(value, list):
        value = dict(item.partition("=")[::2] for item in value)
    return {str(k): "" if v is None else str(v) for k, v in (value or {}).items()}


def tmdns_services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The services built from deploy/Dockerfile."""
    return {
        name: service
        for name, service in compose["services"].items()
        if isinstance(service.get("build"), dict)
        and (COMPOSE.parent / service["build"]["context"]).resolve()
        / service["build"]["dockerfile"]
        == DOCKERFILE
    }


def arguments(service: dict[str, Any]) -> Any:
    """The service's command through the real parser; SystemExit is a failure."""
    command = service.get("command")
    assert isinstance(command, list), f"command {command!r}: use the exec form"
    try:
        return build_parser().parse_args(command)
    except SystemExit:
        pytest.fail(f"`tmdns {shlex.join(command)}` is no tmdns command")


def role_services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        name: service
        for name, service in tmdns_services(compose).items()
        if arguments(service).handler is cmd_serve
    }


def role_of(service: dict[str, Any]) -> Role:
    return Role(arguments(service).role)


def service_settings(
    service: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> Settings:
    """What the container runs with: the image's ENV, then the service's."""
    env = dockerfile_env() | mapping(service.get("environment"))
    argv = service["command"] if arguments(service).handler is cmd_serve else None
    return settings_from(env, monkeypatch, argv)


def test_compose_builds_the_image_from_this_tree() -> None:
    compose = load_compose()
    services = tmdns_services(compose)
    assert len(services) >= 5, "each tmdns service builds deploy/Dockerfile"
    assert len({s.get("image") for s in services.values()}) == 1


def test_every_tmdns_command_is_a_real_subcommand_with_a_role() -> None:
    services = tmdns_services(load_compose())
    handlers = Counter(arguments(s).handler for s in services.values())
    assert handlers == {cmd_migrate: 1, cmd_serve: len(services) - 1}
    for name, service in services.items():
        args = arguments(service)
        if args.handler is cmd_serve:
            # Explicit, and one role each: `all` against one PostgreSQL would
            # run every role once per container.
            assert args.role is not None, f"{name}: no --role, so every role"
            assert Role(args.role) is not Role.ALL, name


def test_the_topology_is_api_prober_and_two_dns_instances() -> None:
    roles = Counter(role_of(s) for s in role_services(load_compose()).values())
    assert roles == {Role.API: 1, Role.PROBER: 1, Role.DNS: 2}


def test_the_fault_suite_runs_the_same_topology_as_processes() -> None:
    """tests/e2e/test_faults.py starts these members, named as these services."""
    services = role_services(load_compose())
    assert {name: role_of(s).value for name, s in services.items()} == TOPOLOGY


def test_migrate_waits_for_postgres_and_every_role_for_migrate() -> None:
    compose = load_compose()
    services = compose["services"]
    (migrate,) = [
        name
        for name, s in tmdns_services(compose).items()
        if arguments(s).handler is cmd_migrate
    ]
    postgres = services[migrate]["depends_on"]
    assert list(postgres) == ["postgres"]
    assert postgres["postgres"]["condition"] == "service_healthy"
    assert services["postgres"]["image"].startswith("postgres:")
    assert "pg_isready" in services["postgres"]["healthcheck"]["test"]
    # A one-shot that restarts would migrate for ever and never "complete".
    assert services[migrate].get("restart", "no") in ("no", "on-failure")
    for name in role_services(compose):
        needs = services[name]["depends_on"]
        assert needs[migrate]["condition"] == "service_completed_successfully", name


def test_every_tmdns_service_reads_the_postgres_service(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Host, port, user, password and database of TMDNS_DB__URL are those the
    postgres service is made with, whatever POSTGRES_PASSWORD is given."""
    for given in (OPERATOR, OPERATOR | {"POSTGRES_PASSWORD": "s3cret"}):
        compose = load_compose(given)
        db = mapping(compose["services"]["postgres"]["environment"])
        for name, service in tmdns_services(compose).items():
            url = make_url(service_settings(service, monkeypatch).db.url)
            assert url.get_backend_name() == "postgresql", name
            assert url.host == "postgres", name
            assert url.port in (None, 5432), name
            assert url.username == db["POSTGRES_USER"], name
            assert url.password == db["POSTGRES_PASSWORD"], name
            assert url.database == db["POSTGRES_DB"], name


def test_the_bootstrap_token_must_be_given_and_reaches_the_api(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (api,) = [
        name
        for name, s in role_services(load_compose()).items()
        if role_of(s) is Role.API
    ]
    written = mapping(raw_compose()["services"][api]["environment"])
    assert re.fullmatch(
        r"\$\{TMDNS_BOOTSTRAP_TOKEN:\?.+\}", written["TMDNS_BOOTSTRAP_TOKEN"]
    ), "the token comes from the operator, never from the file"
    with pytest.raises(MissingVariable, match="TMDNS_BOOTSTRAP_TOKEN"):
        load_compose({})
    settings = service_settings(load_compose()["services"][api], monkeypatch)
    assert settings.bootstrap_token is not None
    token = settings.bootstrap_token.get_secret_value()
    assert token == OPERATOR["TMDNS_BOOTSTRAP_TOKEN"]


def test_each_role_has_a_status_listener_and_the_images_health_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    check = ["CMD", *healthcheck_command()]
    for name, service in role_services(load_compose()).items():
        settings = service_settings(service, monkeypatch)
        assert settings.metrics.listen is not None, f"{name}: no /healthz"
        assert split_hostport(settings.metrics.listen)[0] not in LOOPBACK, name
        assert not service["healthcheck"].get("disable"), name
        assert service["healthcheck"]["test"] == check, name


@dataclass(frozen=True)
class Published:
    host_ip: str
    host_port: int
    port: int
    protocol: str


def published(service: dict[str, Any]) -> list[Published]:
    """`[IP:]HOST:CONTAINER[/PROTO]` entries of a service's ports."""
    found = []
    for entry in service.get("ports", []):
        text, _, protocol = str(entry).partition("/")
        parts = text.rsplit(":", 2)
        ip = parts[0] if len(parts) == 3 else "0.0.0.0"
        found.append(Published(ip, int(parts[-2]), int(parts[-1]), protocol or "tcp"))
    return found


def listening(settings: Settings) -> set[tuple[int, str]]:
    """(port, protocol) the process listens on, by its role."""
    ports = set()
    if settings.metrics.listen:
        ports.add((split_hostport(settings.metrics.listen)[1], "tcp"))
    if settings.role in (Role.DNS, Role.ALL):
        for address in settings.dns.listen:
            port = split_hostport(address)[1]
            ports |= {(port, "udp"), (port, "tcp")}
    if settings.role in (Role.API, Role.ALL):
        ports.add((split_hostport(settings.api.listen)[1], "tcp"))
    return ports


def test_published_ports_reach_a_listener_and_do_not_collide(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    taken: Counter[tuple[int, str]] = Counter()
    for name, service in role_services(load_compose()).items():
        settings = service_settings(service, monkeypatch)
        ports = published(service)
        inside = {(p.port, p.protocol) for p in ports}
        assert inside <= listening(settings), f"{name}: nothing listens there"
        taken.update((p.host_port, p.protocol) for p in ports)
        if settings.role is Role.DNS:
            # UDP and TCP (truncated answers are retried over TCP).
            port = split_hostport(settings.dns.listen[0])[1]
            assert {(port, "udp"), (port, "tcp")} <= inside, name
            assert split_hostport(settings.dns.listen[0])[0] not in LOOPBACK
        if settings.role is Role.API:
            api = split_hostport(settings.api.listen)[1]
            (http,) = [p for p in ports if p.port == api]
            assert http.host_ip == "127.0.0.1", "plain HTTP: loopback only"
    assert [key for key, n in taken.items() if n > 1] == []


def test_each_dns_instance_keeps_its_snapshot_file_on_a_volume(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    compose = load_compose()
    mounts = []
    for name, service in role_services(compose).items():
        if role_of(service) is not Role.DNS:
            continue
        snapshot = service_settings(service, monkeypatch).dns.snapshot_file
        assert snapshot, name
        volumes = [str(v).split(":") for v in service.get("volumes", [])]
        (volume,) = [
            source
            for source, target, *_ in volumes
            if PurePosixPath(snapshot).is_relative_to(target)
        ]
        assert volume in compose["volumes"], name
        mounts.append(volume)
    assert len(set(mounts)) == len(mounts) == 2, "one volume per instance"


# ---- the Dockerfile -------------------------------------------------------------


@dataclass(frozen=True)
class Instruction:
    keyword: str
    value: str


def dockerfile_stages() -> list[list[Instruction]]:
    """Instructions per stage, continuation lines joined, comments dropped,
    global ARG defaults substituted."""
    stages: list[list[Instruction]] = [[]]
    args: dict[str, str] = {}
    pending = ""
    for line in DOCKERFILE.read_text(encoding="utf-8").splitlines():
        if line.strip().startswith("#") or not (pending or line.strip()):
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1]
            continue
        keyword, _, value = (pending + line).strip().partition(" ")
        pending = ""
        keyword = keyword.upper()
        if keyword == "ARG" and len(stages) == 1:
            name, _, default = value.partition("=")
            args[name] = default
        if keyword == "FROM":
            for name, default in args.items():
                value = value.replace("${" + name + "}", default)
            stages.append([])
        stages[-1].append(Instruction(keyword, value.strip()))
    return stages[1:]


def final_stage() -> list[Instruction]:
    return dockerfile_stages()[-1]


def values(stage: list[Instruction], keyword: str) -> list[str]:
    return [i.value for i in stage if i.keyword == keyword]


def dockerfile_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for value in values(final_stage(), "ENV"):
        for item in shlex.split(value):
            name, sep, setting = item.partition("=")
            assert sep, f"ENV {item!r}: use NAME=value"
            env[name] = setting
    return env


def healthcheck_command() -> list[str]:
    (check,) = values(final_stage(), "HEALTHCHECK")
    _, sep, command = check.partition("CMD ")
    assert sep, "HEALTHCHECK without CMD"
    parsed: list[str] = json.loads(command)
    return parsed


def test_the_runtime_image_is_slim_python_311() -> None:
    (base,) = values(final_stage(), "FROM")
    assert re.fullmatch(r"python:3\.11(\.\d+)?-slim(-\w+)?", base), base


def test_the_runtime_image_has_no_compiler_and_installs_only_built_wheels() -> None:
    build, runtime = dockerfile_stages()[0], final_stage()
    assert any(re.search(r"\bgcc\b", r) for r in values(build, "RUN")), (
        "the build stage compiles app/dns/_mmsg.c"
    )
    runs = " ".join(values(runtime, "RUN"))
    assert not re.search(r"\b(gcc|build-essential|clang|g\+\+)\b", runs)
    assert re.search(r"pip install --no-index --find-links \S+ tmdns", runs)


def test_the_build_copies_files_that_exist() -> None:
    """The context is the top of the tree (compose.yaml builds from there)."""
    for value in values(dockerfile_stages()[0], "COPY"):
        *sources, _ = [t for t in shlex.split(value) if not t.startswith("--")]
        for source in sources:
            assert (ROOT / source).exists(), f"COPY {source}: not in the tree"
    assert (ROOT / "deploy" / "build_extension.py").exists()


def test_the_image_runs_tmdns_as_a_user_other_than_root() -> None:
    stage = final_stage()
    users = values(stage, "USER")
    assert users, "no USER: the container would run as root"
    assert users[-1] == "tmdns"
    user_at = max(i for i, s in enumerate(stage) if s.keyword == "USER")
    made = [s.value for s in stage[:user_at] if s.keyword == "RUN"]
    assert any(re.search(r"useradd .*\btmdns\b", r) for r in made)
    assert [json.loads(v) for v in values(stage, "ENTRYPOINT")] == [["tmdns"]]
    (command,) = [json.loads(v) for v in values(stage, "CMD")]
    assert build_parser().parse_args(command).handler is cmd_serve


def test_the_image_keeps_its_state_in_the_volume(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stage = final_stage()
    workdir = values(stage, "WORKDIR")[-1]
    assert workdir == "/var/lib/tmdns"
    assert workdir in [v for raw in values(stage, "VOLUME") for v in json.loads(raw)]
    settings = settings_from(dockerfile_env(), monkeypatch)
    database = sqlite_file(settings.db.url)
    assert database is not None
    for path in (database, Path(str(settings.dns.snapshot_file))):
        assert path.is_relative_to(workdir), path


def test_the_image_exposes_the_ports_it_listens_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = settings_from(dockerfile_env(), monkeypatch)  # serve: every role
    exposed = set()
    for value in values(final_stage(), "EXPOSE"):
        for item in value.split():
            port, _, protocol = item.partition("/")
            exposed.add((int(port), protocol or "tcp"))
    assert exposed == listening(settings)
    assert {(53, "udp"), (53, "tcp"), (8080, "tcp")} <= exposed
    for address in [*settings.dns.listen, settings.api.listen]:
        assert split_hostport(address)[0] not in LOOPBACK, address


def test_the_health_check_asks_healthz_on_the_status_listener() -> None:
    command = healthcheck_command()
    assert command[:2] == ["python", "-c"], "no curl in a slim image"
    code = command[2]
    compile(code, "HEALTHCHECK", "exec")  # a SyntaxError fails here
    assert "/healthz" in code
    assert "TMDNS_METRICS__LISTEN" in code
    assert "TMDNS_METRICS__LISTEN" in dockerfile_env()


# ---- systemd units --------------------------------------------------------------

Unit = dict[str, list[tuple[str, str]]]


def parse_unit(path: Path) -> Unit:
    """Sections of (key, value) pairs in order: systemd allows a key more than
    once (EnvironmentFile=, After=), which configparser does not."""
    unit: Unit = {}
    section = ""
    pending = ""
    for raw in path.read_text(encoding="utf-8").splitlines():
        stripped = raw.strip()
        if not pending and (not stripped or stripped.startswith(("#", ";"))):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        line, pending = pending + stripped, ""
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            unit.setdefault(section, [])
            continue
        key, sep, value = line.partition("=")
        assert sep and section, f"{path.name}: {line!r}"
        unit[section].append((key.strip(), value.strip()))
    return unit


def get(unit: Unit, section: str, key: str) -> list[str]:
    return [v for k, v in unit.get(section, []) if k == key]


def one(unit: Unit, section: str, key: str) -> str:
    (value,) = get(unit, section, key)
    return value


def words(unit: Unit, section: str, key: str) -> list[str]:
    return [w for value in get(unit, section, key) for w in value.split()]


def test_the_role_unit_serves_the_instance_name_as_its_role(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    program, *argv = shlex.split(one(parse_unit(ROLE_UNIT), "Service", "ExecStart"))
    assert program == "/opt/tmdns/bin/tmdns"
    assert argv == ["serve", "--role", "%i"]
    for role in Role:  # tmdns@dns, tmdns@api, …: each a valid command
        instance = [a.replace("%i", role.value) for a in argv]
        assert settings_from({}, monkeypatch, instance).role is role


def test_the_migrate_unit_migrates_what_the_roles_use() -> None:
    roles, migrate = parse_unit(ROLE_UNIT), parse_unit(MIGRATE_UNIT)
    program, *argv = shlex.split(one(migrate, "Service", "ExecStart"))
    assert program == shlex.split(one(roles, "Service", "ExecStart"))[0]
    assert build_parser().parse_args(argv).handler is cmd_migrate
    assert one(migrate, "Service", "Type") == "oneshot"
    for key in ("User", "Group", "WorkingDirectory"):
        assert get(migrate, "Service", key) == get(roles, "Service", key), key
    shared = [f for f in get(roles, "Service", "EnvironmentFile") if f[0] != "-"]
    assert shared == ["/etc/tmdns/tmdns.env"]
    assert shared[0] in get(migrate, "Service", "EnvironmentFile")
    # Roles start after a migration in the same boot, but never pull one in:
    # a DNS host on a read-only standby must not migrate (deploy/README.md).
    assert "tmdns-migrate.service" in words(roles, "Unit", "After")
    for key in ("Wants", "Requires", "BindsTo"):
        assert "tmdns-migrate.service" not in words(roles, "Unit", key)
    # `systemctl enable` does nothing for a unit without an [Install] target.
    assert get(migrate, "Install", "WantedBy") == ["multi-user.target"]


@pytest.mark.parametrize("path", UNITS, ids=lambda p: p.name)
def test_everything_the_units_write_is_writable(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ProtectSystem=strict: the SQLite file and the snapshot file of the
    environment example must lie under ReadWritePaths."""
    unit = parse_unit(path)
    assert one(unit, "Service", "ProtectSystem") == "strict"
    writable = words(unit, "Service", "ReadWritePaths")
    assert one(unit, "Service", "WorkingDirectory") in writable
    settings = settings_from(env_file(ENV_EXAMPLE), monkeypatch)
    database = sqlite_file(settings.db.url)
    assert database is not None
    for target in (database, Path(str(settings.dns.snapshot_file))):
        assert any(target.is_relative_to(w) for w in writable), target


def readme() -> str:
    return README.read_text(encoding="utf-8")


def test_the_readme_names_only_real_roles_and_units() -> None:
    text = readme()
    roles = set(re.findall(r"\btmdns@(\w+)", text))
    assert roles == {r.value for r in Role}, "every role, and nothing else"
    for units in re.findall(r"systemctl (?:enable --now|start) ([^\n`]+)", text):
        for word in units.split():
            name = word.removesuffix(".service")
            template = re.sub(r"@\w+$", "@", name)
            assert (DEPLOY / "systemd" / f"{template}.service").exists(), name


def test_the_readme_installs_what_the_units_expect() -> None:
    """The user, the virtual environment, the directories and the environment
    file of the installation steps are those the units name."""
    text = readme()
    unit = parse_unit(ROLE_UNIT)
    user = one(unit, "Service", "User")
    home = one(unit, "Service", "WorkingDirectory")
    assert f"useradd --system --home {home} --shell /usr/sbin/nologin {user}" in text
    venv = str(Path(shlex.split(one(unit, "Service", "ExecStart"))[0]).parents[1])
    assert f"python3 -m venv {venv}\n" in text
    assert re.search(rf"install -d -o {user} -g {user} .*{home}\n", text)
    (shared,) = [f for f in get(unit, "Service", "EnvironmentFile") if f[0] != "-"]
    assert f"deploy/{ENV_EXAMPLE.name} {shared}\n" in text
    assert "docker compose -f deploy/compose.yaml up -d" in text


SYSTEMD_ANALYZE = shutil.which("systemd-analyze")
# What `systemd-analyze verify` says about a host where tmdns is not
# installed, which is every machine these tests run on: ExecStart's
# /opt/tmdns/bin/tmdns does not exist ("Command … is not executable"). That
# class of message, for that binary only, is not a mistake in the unit.
# (systemd 252 does not look up User=; should a later one say the user
# tmdns does not exist, that is the same class: the host lacks the install.)
NOT_INSTALLED = (
    re.compile(r"Command /opt/tmdns/bin/tmdns is not executable: No such file"),
    re.compile(r"[Uu]ser '?tmdns'? (not found|does not exist)"),
)


def verify_complaints(paths: Iterator[Path] | tuple[Path, ...]) -> list[str]:
    assert SYSTEMD_ANALYZE is not None
    done = subprocess.run(
        [SYSTEMD_ANALYZE, "verify", *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    lines = (done.stdout + done.stderr).splitlines()
    return [
        line
        for line in lines
        if line.strip() and not any(p.search(line) for p in NOT_INSTALLED)
    ]


def test_systemd_accepts_the_units() -> None:
    """Unknown keys, bad values and broken dependencies are reported here;
    the template is checked as systemd would instantiate it (tmdns@i)."""
    if SYSTEMD_ANALYZE is None:
        require("systemd-analyze is not installed (Debian systemd)")
    assert verify_complaints(UNITS) == []

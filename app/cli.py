"""The `tmdns` command: builds Settings once, sets up logging, runs a subcommand."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import logging
import secrets
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from ipaddress import ip_address
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import SecretStr, ValidationError

from app import __version__, transfer
from app.demo import DEMO_ZONE
from app.domain import names
from app.domain.explain import Question, rtype_of
from app.domain.model import Config, Method
from app.domain.tokens import Scope, Token, digest_of
from app.domain.validation import Invalid
from app.settings import EventLoop, Role, Settings, split_hostport
from app.store.base import Conflict, NotFound, Step, StoreUnavailable
from app.store.engine import sqlite_file
from app.store.sql import SqlStore

if TYPE_CHECKING:
    from app.runtime import Running

# The roles (app.runtime: aiohttp, the prober), the migrations (alembic) and the
# Azure importer are imported by the subcommands that use them: each of them
# costs a command that does not need it a noticeable share of a second.

DESCRIPTION = (
    "tmdns: an authoritative DNS traffic manager. Profiles answer A, AAAA and "
    "SRV by priority, weight, performance, geography, multivalue or subnet, "
    "skipping endpoints the health prober finds offline."
)


def _global_flags(parser: argparse.ArgumentParser, default: object) -> None:
    """--config and --db, before or after the subcommand (DESIGN §8)."""
    parser.add_argument(
        "--config", default=default, help="TOML settings file (TMDNS_CONFIG_FILE)"
    )
    parser.add_argument(
        "--db",
        default=default,
        help="database URL (TMDNS_DB__URL), e.g. sqlite:///var/tmdns.db",
    )


class _Sub(argparse.ArgumentParser):
    """Every subcommand takes the global flags too; given there, they win."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        _global_flags(self, argparse.SUPPRESS)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tmdns", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"tmdns {__version__}")
    _global_flags(parser, None)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Sub)

    run = sub.add_parser("serve", help="answer DNS, serve the API and probe endpoints")
    run.add_argument("--role", choices=[r.value for r in Role], help="default: all")
    run.add_argument(
        "--dns",
        metavar="HOST:PORT[,HOST:PORT]",
        help="DNS listen addresses (UDP and TCP)",
    )
    run.add_argument("--api", metavar="HOST:PORT", help="API listen address")
    run.add_argument(
        "--metrics",
        metavar="HOST:PORT",
        help="serve /healthz and /metrics here, whatever the role",
    )
    run.add_argument(
        "--workers", type=int, help="DNS worker processes sharing the port (default 1)"
    )
    run.add_argument(
        "--demo", action="store_true", help=f"create the demo zone {DEMO_ZONE}"
    )
    run.set_defaults(handler=cmd_serve)

    mig = sub.add_parser("migrate", help="upgrade the database schema to the newest")
    mig.set_defaults(handler=cmd_migrate)

    tokens = sub.add_parser("token", help="API tokens: create, list, revoke")
    actions = tokens.add_subparsers(dest="action", required=True, parser_class=_Sub)
    create = actions.add_parser(
        "create", help="print a new token once; only its hash is kept"
    )
    create.add_argument("--name", required=True, help="who or what will use it")
    create.add_argument(
        "--scope",
        choices=[s.value for s in Scope],
        default="read",
        help="read: GET only; write: every change (default: read)",
    )
    create.set_defaults(handler=cmd_token_create)
    actions.add_parser(
        "list", help="names, scopes and dates (never secrets)"
    ).set_defaults(handler=cmd_token_list)
    revoke = actions.add_parser("revoke", help="stop a token from working")
    revoke.add_argument("name")
    revoke.set_defaults(handler=cmd_token_revoke)

    out = sub.add_parser("export", help="the whole configuration as YAML or JSON")
    out.add_argument(
        "file", nargs="?", help="where to write (default: standard output)"
    )
    out.add_argument("--format", choices=["yaml", "json"], help="default: by file name")
    out.set_defaults(handler=cmd_export)

    into = sub.add_parser(
        "import", help="apply a configuration file in one transaction"
    )
    into.add_argument("file")
    into.add_argument("--dry-run", action="store_true", help="show the changes only")
    into.add_argument("--prune", action="store_true", help="delete what the file lacks")
    into.add_argument(
        "--format", choices=["yaml", "json"], help="default: by file name"
    )
    into.add_argument(
        "--from",
        dest="source",
        choices=["tmdns", "azure-tm"],
        default="tmdns",
        help="azure-tm: an Azure Traffic Manager profile",
    )
    into.add_argument(
        "--zone", help="with --from azure-tm: the tmdns zone to put it in"
    )
    into.set_defaults(handler=cmd_import)

    why = sub.add_parser("explain", help="the answer a client would get, and why")
    why.add_argument("name", help="the name asked, e.g. app.tm.example")
    why.add_argument("type", nargs="?", default="A", help="A, AAAA, SRV… (default A)")
    why.add_argument("--client", default="127.0.0.1", help="the client's address")
    why.add_argument("--prefix", type=int, help="as if sent as ECS with this prefix")
    why.add_argument("--json", action="store_true", help="print the JSON document")
    why.set_defaults(handler=cmd_explain)
    return parser


def overrides_from(args: argparse.Namespace) -> dict[str, Any]:
    """Command-line flags beat the environment, which beats the config file."""
    given: dict[str, Any] = {}
    if args.config:
        given["config_file"] = args.config
    if args.db:
        given["db"] = {"url": args.db}
    if getattr(args, "role", None):
        given["role"] = args.role
    dns: dict[str, Any] = {}
    if getattr(args, "dns", None):
        dns["listen"] = args.dns
    if getattr(args, "workers", None):
        dns["workers"] = args.workers
    if dns:
        given["dns"] = dns
    if getattr(args, "api", None):
        given["api"] = {"listen": args.api}
    if getattr(args, "metrics", None):
        given["metrics"] = {"listen": args.metrics}
    return given


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = Settings(**overrides_from(args))
    except (ValidationError, FileNotFoundError) as exc:
        print(f"tmdns: bad settings: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=settings.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    code: int = args.handler(settings, args)
    return code


def cmd_migrate(settings: Settings, args: argparse.Namespace) -> int:
    from app.store import migrate as migrations

    migrations.upgrade(settings.db.url)
    print(f"database at {settings.db.url} is at the newest schema")
    return 0


def _actor() -> str:
    return f"cli:{getpass.getuser()}"


def _missing_database(settings: Settings) -> bool:
    """Commands that use a database never create one: SQLite would make an
    empty file on connect, and the next command would fail on it."""
    path = sqlite_file(settings.db.url)
    if path is None or path.exists():
        return False
    print(
        f"tmdns: no database at {path.resolve()} (a relative path is taken from "
        "the working directory): run `tmdns migrate` there, or pass --db",
        file=sys.stderr,
    )
    return True


def _with_store(settings: Settings, use: Callable[[SqlStore], Awaitable[int]]) -> int:
    if _missing_database(settings):
        return 1

    async def run() -> int:
        async with SqlStore.open(settings.db.url) as store:
            return await use(store)

    try:
        return asyncio.run(run())
    except (StoreUnavailable, NotFound, Conflict) as exc:
        print(f"tmdns: {exc}", file=sys.stderr)
        return 1


def cmd_token_create(settings: Settings, args: argparse.Namespace) -> int:
    secret = "tmdns_" + secrets.token_urlsafe(32)
    token = Token(args.name, Scope(args.scope), digest_of(secret))

    async def create(store: SqlStore) -> int:
        await store.create_token(token, actor=_actor())
        print(secret)
        print(
            f"token {args.name!r} ({args.scope}) created: the line above is shown "
            "only once",
            file=sys.stderr,
        )
        return 0

    return _with_store(settings, create)


def cmd_token_list(settings: Settings, args: argparse.Namespace) -> int:
    async def show(store: SqlStore) -> int:
        for token, created, revoked in await store.list_tokens():
            when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(created))
            status = (
                "revoked " + time.strftime("%Y-%m-%d %H:%M", time.gmtime(revoked))
                if revoked
                else "live"
            )
            print(f"{token.name}\t{token.scope}\tcreated {when}\t{status}")
        return 0

    return _with_store(settings, show)


def cmd_token_revoke(settings: Settings, args: argparse.Namespace) -> int:
    async def revoke(store: SqlStore) -> int:
        await store.revoke_token(args.name, actor=_actor())
        print(f"token {args.name!r} revoked")
        return 0

    return _with_store(settings, revoke)


def cmd_export(settings: Settings, args: argparse.Namespace) -> int:
    async def export(store: SqlStore) -> int:
        config, _ = await store.load_all()
        fmt = args.format or (transfer.format_of(args.file) if args.file else "yaml")
        text = transfer.dump(transfer.export_document(config), fmt)
        if args.file:
            await asyncio.to_thread(Path(args.file).write_text, text, encoding="utf-8")
        else:
            sys.stdout.write(text)
        return 0

    return _with_store(settings, export)


def _desired(args: argparse.Namespace) -> tuple[Config, list[str]]:
    """The configuration the file asks for, and what could not be mapped."""
    text = Path(args.file).read_text(encoding="utf-8")
    if args.source == "azure-tm":
        if not args.zone:
            raise transfer.TransferError("--from azure-tm needs --zone")
        from app import azure

        try:
            document, unmapped = azure.from_azure(text, names.absolute(args.zone))
        except azure.AzureError as exc:
            raise transfer.TransferError(str(exc)) from exc
        converted = transfer.dump(document, "json")
        return transfer.load(
            converted, "json", source=f"{args.file} (converted)"
        ), unmapped
    fmt = args.format or transfer.format_of(args.file)
    return transfer.load(text, fmt, source=args.file), []


def cmd_import(settings: Settings, args: argparse.Namespace) -> int:
    if args.source == "azure-tm" and args.prune:
        print(
            "tmdns: --prune with --from azure-tm would delete every other profile",
            file=sys.stderr,
        )
        return 2
    try:
        desired, unmapped = _desired(args)
    except (OSError, transfer.TransferError, names.BadName) as exc:
        print(f"tmdns: {exc}", file=sys.stderr)
        return 1
    for line in unmapped:
        print(f"not imported: {line}", file=sys.stderr)

    async def apply(store: SqlStore) -> int:
        current, _ = await store.load_all()
        try:
            changes = transfer.plan(current, desired, prune=args.prune)
        except transfer.TransferError as exc:
            print(f"tmdns: {exc}", file=sys.stderr)
            return 1
        for line in transfer.describe(changes) or ["no changes"]:
            print(line)
        problems = transfer.config_problems(transfer.apply_plan(current, changes))
        if problems:
            for problem in problems:
                print(f"tmdns: {problem}", file=sys.stderr)
            return 1
        if args.dry_run:
            print("dry run: nothing written")
            return 0
        steps = [Step(c.action, c.kind, c.zone, c.name, c.after) for c in changes]
        try:
            await store.apply_steps(steps, actor=_actor())
        except Invalid as exc:
            print(f"tmdns: {exc}", file=sys.stderr)
            return 1
        print(f"applied {len(steps)} change(s) in one transaction")
        return 0

    return _with_store(settings, apply)


def cmd_explain(settings: Settings, args: argparse.Namespace) -> int:
    try:
        question = Question(
            args.name, rtype_of(args.type), ip_address(args.client), args.prefix
        )
    except ValueError as exc:
        print(f"tmdns: {exc}", file=sys.stderr)
        return 2
    if _missing_database(settings):
        return 1
    try:
        from app.runtime import explain_from_store

        body = asyncio.run(explain_from_store(settings, question))
    except StoreUnavailable as exc:
        print(f"tmdns: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(body, indent=2))
        return 0
    print(f"{body['name']} {body['type']} for {body['client']}: {body['rcode']}")
    for line in body["why"]:
        print(f"  {line}")
    for section in ("answer", "authority", "additional"):
        for r in body[section]:
            print(f"{section:>10}: {r['name']} {r['ttl']} {r['type']} {r['data']}")
    print(f"ECS scope: /{body['ecs_scope']}")
    return 0


def cmd_serve(settings: Settings, args: argparse.Namespace) -> int:
    if args.demo and settings.bootstrap_token is None:
        # A demo needs a usable API; a real deployment sets TMDNS_BOOTSTRAP_TOKEN.
        settings.bootstrap_token = SecretStr(secrets.token_urlsafe(24))
    import uvloop

    from app.runtime import serve

    run = uvloop.run if settings.event_loop is EventLoop.UVLOOP else asyncio.run
    try:
        run(serve(settings, demo=args.demo, announce=_announcer(settings, args.demo)))
    except StoreUnavailable as exc:
        print(f"tmdns: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"tmdns: cannot listen: {exc}", file=sys.stderr)
        return 1
    return 0


def _announcer(settings: Settings, demo: bool) -> Any:
    def announce(run: Running) -> None:
        if not demo:
            return
        host = split_hostport(settings.dns.listen[0])[0]
        api_host = split_hostport(settings.api.listen)[0]
        token = (
            settings.bootstrap_token.get_secret_value()
            if settings.bootstrap_token
            else ""
        )
        dig = f"dig @{host} -p {run.dns_port}"
        config = run.snapshot().config
        names_ = demo_lines(config, dig)
        first = next(iter(_profiles(config)), "app")
        print(
            f"""
tmdns is serving the demo zone {DEMO_ZONE}
{names_}
  {dig} {DEMO_ZONE} SOA
  {dig} {DEMO_ZONE} NS
  {dig} nothing.{DEMO_ZONE} A      NXDOMAIN with the SOA
  {dig} +tcp {first}.{DEMO_ZONE} A     the same over TCP
API: curl -H 'Authorization: Bearer {token}' http://{api_host}:{run.api_port}/api/v1/zones
Stop with Ctrl-C.
""",
            flush=True,
        )

    return announce


def _profiles(config: Config) -> list[str]:
    return [p.name for z in config.zones if z.name == DEMO_ZONE for p in z.profiles]


def demo_lines(config: Config, dig: str) -> str:
    """One dig line per profile of the demo zone as it is now (edits included),
    with what it answers from."""
    lines = []
    for zone in config.zones:
        if zone.name != DEMO_ZONE:
            continue
        for p in zone.profiles:
            choices = ", ".join(
                f"{e.address or e.target or e.child}"
                + (f" (weight {e.weight})" if p.method is Method.WEIGHTED else "")
                for e in sorted(p.endpoints, key=lambda e: e.priority)
                if e.enabled
            )
            fqdn = names.join(p.name, zone.name)
            lines.append(f"  {dig} {fqdn} A    {p.method}: {choices or 'nothing'}")
    return "\n".join(lines)

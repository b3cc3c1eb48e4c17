"""Which database errors mean "the database cannot be reached right now".

Both drivers report an outage in many shapes: asyncpg raises its own errors
("the database system is starting up", "connection was closed in the middle
of operation"), SQLAlchemy wraps some of them in a bare DBAPIError, a refused
connection is an OSError, and SQLite says "database is locked". They are all
sorted here, once, so every caller sees one StoreUnavailable and never a 500.
"""

from __future__ import annotations

from sqlalchemy import exc as sa

# SQLSTATE class 08 is "connection exception"; the rest are a server shutting
# down or starting up, out of connection slots, a read-only standby, or a
# transaction the server gave up on that can simply be tried again.
UNAVAILABLE_CLASSES = ("08",)
UNAVAILABLE_STATES = frozenset(
    {
        "57P01",  # admin_shutdown: pg_ctl stop -m fast
        "57P02",  # crash_shutdown: -m immediate, or a crashed backend
        "57P03",  # cannot_connect_now: starting up or in recovery
        "57P05",  # idle_session_timeout
        "53300",  # too_many_connections
        "25006",  # read_only_sql_transaction: a write reached a standby
        "40001",  # serialization failure, and a standby's recovery conflict
        "40P01",  # deadlock detected: the other transaction went on
    }
)


def sqlstate(error: BaseException) -> str | None:
    """The SQLSTATE of a driver error, wherever the driver keeps it."""
    for candidate in _chain(error):
        code = getattr(candidate, "sqlstate", None) or getattr(
            candidate, "pgcode", None
        )
        if isinstance(code, str):
            return code
    return None


def is_unavailable(error: BaseException) -> bool:
    """True when the error says the database is out of reach, not that the
    statement was wrong: retrying later, on the same data, can succeed."""
    if isinstance(error, sa.DBAPIError) and error.connection_invalidated:
        return True
    if isinstance(error, sa.OperationalError | sa.InterfaceError | sa.TimeoutError):
        return True  # SQLite busy/locked/unopenable, a closed pool connection
    code = sqlstate(error)
    if code is not None:
        return code[:2] in UNAVAILABLE_CLASSES or code in UNAVAILABLE_STATES
    return any(_is_connection_error(c) for c in _chain(error))


def _is_connection_error(error: BaseException) -> bool:
    if isinstance(error, OSError | TimeoutError):
        return True  # refused, reset, unreachable, or a connect that timed out
    # asyncpg's own classes, by name so this module does not import a driver.
    names = {cls.__name__ for cls in type(error).__mro__}
    return bool(names & {"PostgresConnectionError", "InterfaceError"})


def _chain(error: BaseException) -> list[BaseException]:
    """The error, what SQLAlchemy wrapped (`orig`) and what caused each."""
    seen: list[BaseException] = []
    todo: list[BaseException | None] = [error]
    while todo:
        current = todo.pop()
        if current is None or any(current is s for s in seen) or len(seen) > 8:
            continue
        seen.append(current)
        context = None if current.__suppress_context__ else current.__context__
        todo += [getattr(current, "orig", None), current.__cause__, context]
    return seen


def is_unmigrated(error: BaseException) -> bool:
    """A table is missing: the database was never migrated (or is another
    application's). Reported like an outage, with what to do about it."""
    if sqlstate(error) == "42P01":  # undefined_table
        return True
    return any("no such table" in str(c) for c in _chain(error))

"""One classification of database errors: what both drivers raise when the
database is away becomes StoreUnavailable (503), what a wrong statement or a
conflict raises does not."""

from __future__ import annotations

import sqlite3

import asyncpg
import pytest
from sqlalchemy import exc as sa

from app.store.failures import is_unavailable


def _wrapped(
    orig: BaseException, kind: type[sa.DBAPIError] = sa.DBAPIError
) -> BaseException:
    """As SQLAlchemy raises it: the driver's error as `orig` and as the cause."""
    error = kind("SELECT 1", {}, orig)  # type: ignore[arg-type]
    error.__cause__ = orig
    return error


class _AdaptedError(Exception):
    """SQLAlchemy's asyncpg adapter keeps the SQLSTATE on its own error."""

    def __init__(self, message: str, sqlstate: str) -> None:
        super().__init__(message)
        self.sqlstate = self.pgcode = sqlstate


OUTAGES = [
    _wrapped(
        asyncpg.exceptions.CannotConnectNowError("the database system is starting up")
    ),
    _wrapped(
        asyncpg.exceptions.AdminShutdownError(
            "terminating connection due to administrator command"
        )
    ),
    _wrapped(
        asyncpg.exceptions.ConnectionDoesNotExistError(
            "connection was closed in the middle of operation"
        )
    ),
    _wrapped(
        asyncpg.exceptions.TooManyConnectionsError("sorry, too many clients already")
    ),
    _wrapped(_AdaptedError("the database system is shutting down", "57P03")),
    _wrapped(
        _AdaptedError("cannot execute INSERT in a read-only transaction", "25006")
    ),
    _wrapped(asyncpg.exceptions.InterfaceError("connection is closed")),
    _wrapped(sqlite3.OperationalError("database is locked"), sa.OperationalError),
    _wrapped(
        sqlite3.OperationalError("unable to open database file"), sa.OperationalError
    ),
    ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 5432)"),
    TimeoutError("connect timed out"),
    sa.TimeoutError("QueuePool limit of size 5 overflow 5 reached"),
]
NOT_OUTAGES = [
    _wrapped(
        asyncpg.exceptions.UniqueViolationError("duplicate key"), sa.IntegrityError
    ),
    _wrapped(_AdaptedError("syntax error at or near", "42601"), sa.ProgrammingError),
    _wrapped(
        _AdaptedError("invalid input syntax for type json", "22P02"), sa.DataError
    ),
    ValueError("illegal IP address string passed to inet_pton"),
    KeyError("method"),
]


@pytest.mark.parametrize(
    "error", OUTAGES, ids=lambda e: type(e).__name__ + ":" + str(e)[:40]
)
def test_an_outage_is_unavailable(error: BaseException) -> None:
    assert is_unavailable(error)


@pytest.mark.parametrize("error", NOT_OUTAGES, ids=lambda e: type(e).__name__)
def test_a_wrong_statement_or_bad_data_is_not(error: BaseException) -> None:
    assert not is_unavailable(error)


def test_an_invalidated_connection_is_an_outage_whatever_the_message() -> None:
    error = sa.DBAPIError("SELECT 1", {}, Exception("?"), connection_invalidated=True)
    assert is_unavailable(error)


def test_an_error_raised_from_none_is_not_its_hidden_context() -> None:
    """A value error raised `from None` while handling an OSError (how a bad
    stored address reads) is a bad row, not an outage: it must not send
    clients a 503 and a retry."""
    try:
        try:
            raise OSError("illegal IP address string passed to inet_pton")
        except OSError:
            raise ValueError(
                "address 'x' is not a plain IPv4 or IPv6 address"
            ) from None
    except ValueError as bad_row:
        assert not is_unavailable(bad_row)

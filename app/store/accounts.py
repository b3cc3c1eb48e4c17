"""API tokens and the audit log: who may change things, and who did."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select

from app.domain.tokens import Scope, Token
from app.store.base import AuditEntry, AuditQuery, Conflict, NotFound
from app.store.mapping import from_epoch, to_epoch
from app.store.sessions import Sessions
from app.store.tables import AuditRow, TokenRow


class Accounts:
    def __init__(self, sessions: Sessions) -> None:
        self._sessions = sessions

    async def create_token(self, token: Token, *, actor: str) -> Token:
        async with self._sessions.write() as session:
            old = await session.scalar(
                select(TokenRow).where(TokenRow.name == token.name)
            )
            if old is not None and old.revoked_at is None:
                raise Conflict(
                    f"a live token named {token.name!r} exists: revoke it first"
                )
            if old is not None:
                # A revoked token's name may be used again; the audit log keeps
                # the old one's history.
                await session.delete(old)
                await session.flush()
            session.add(
                TokenRow(
                    name=token.name,
                    scope=token.scope.value,
                    digest=token.digest,
                    created_at=from_epoch(self._sessions.clock()),
                )
            )
            self._sessions.audit(
                session,
                actor,
                "token.create",
                f"token/{token.name}",
                None,
                {"name": token.name, "scope": token.scope.value},
            )
        return token

    async def list_tokens(self) -> list[tuple[Token, float, float | None]]:
        """Every token with when it was created and, if so, revoked."""
        async with self._sessions.read() as session:
            rows = await session.scalars(select(TokenRow).order_by(TokenRow.name))
            return [
                (_token(r), to_epoch(r.created_at) or 0.0, to_epoch(r.revoked_at))
                for r in rows
            ]

    async def revoke_token(self, name: str, *, actor: str) -> None:
        async with self._sessions.write() as session:
            row = await session.scalar(select(TokenRow).where(TokenRow.name == name))
            if row is None:
                raise NotFound(f"no token named {name!r}")
            if row.revoked_at is not None:
                raise NotFound(f"the token {name!r} is already revoked")
            row.revoked_at = from_epoch(self._sessions.clock())
            self._sessions.audit(
                session, actor, "token.revoke", f"token/{name}", None, None
            )

    async def find_token(self, digest: str) -> Token | None:
        """The live token with this digest (the secret itself is never stored)."""
        async with self._sessions.read() as session:
            row = await session.scalar(
                select(TokenRow)
                .where(TokenRow.digest == digest)
                .where(TokenRow.revoked_at.is_(None))
            )
            return _token(row) if row is not None else None

    async def audit_log(self, query: AuditQuery) -> list[AuditEntry]:
        """Changes, newest first, filtered by resource prefix, actor and time."""
        statement = select(AuditRow).order_by(AuditRow.id.desc()).limit(query.limit)
        if query.resource:
            statement = statement.where(AuditRow.resource.startswith(query.resource))
        if query.actor:
            statement = statement.where(AuditRow.actor == query.actor)
        if query.since is not None:
            statement = statement.where(AuditRow.at >= _moment(query.since))
        if query.until is not None:
            statement = statement.where(AuditRow.at <= _moment(query.until))
        async with self._sessions.read() as session:
            return [
                AuditEntry(
                    r.id,
                    to_epoch(r.at) or 0.0,
                    r.actor,
                    r.action,
                    r.resource,
                    r.before,
                    r.after,
                )
                for r in await session.scalars(statement)
            ]


def _token(row: TokenRow) -> Token:
    return Token(row.name, Scope(row.scope), row.digest)


def _moment(seconds: float) -> datetime:
    moment = from_epoch(seconds)
    assert moment is not None
    return moment

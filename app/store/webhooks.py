"""Webhooks: the receivers (audited configuration), their delivery cursor and
lease (bookkeeping, neither audited nor a new generation), and the log."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict

from sqlalchemy import delete, func, or_, select, update

from app.domain.webhooks import Webhook
from app.store.base import Delivery, NotFound
from app.store.mapping import from_epoch, to_epoch
from app.store.sessions import Sessions
from app.store.tables import EventRow, WebhookDeliveryRow, WebhookRow

DELIVERIES_KEPT = 100  # per webhook, newest first


def _webhook(row: WebhookRow) -> Webhook:
    return Webhook(
        row.id,
        row.url,
        tuple(row.events),
        row.secret,
        to_epoch(row.created_at) or 0.0,
        row.cursor,
    )


def shown(webhook: Webhook) -> dict[str, object]:
    """A webhook as the audit log keeps it: never the secret."""
    return {"url": webhook.url, "events": list(webhook.events)}


class Webhooks:
    def __init__(self, sessions: Sessions) -> None:
        self._sessions = sessions

    async def create(self, webhook: Webhook, *, actor: str) -> Webhook:
        """Its cursor starts before its own creation's event: the first
        delivery tells the receiver it was added (a ping, as GitHub sends)."""
        async with self._sessions.write() as session:
            newest = await session.scalar(select(func.max(EventRow.id)))
            row = WebhookRow(
                url=webhook.url,
                events=list(webhook.events),
                secret=webhook.secret,
                created_at=from_epoch(self._sessions.clock()),
                cursor=newest or 0,
            )
            session.add(row)
            await session.flush()
            saved = _webhook(row)
            resource = f"webhook/{row.id}"
            self._sessions.audit(
                session, actor, "webhook.create", resource, None, shown(saved)
            )
            await self._sessions.bump(session)
            return saved

    async def all(self) -> list[Webhook]:
        async with self._sessions.read() as session:
            rows = await session.scalars(select(WebhookRow).order_by(WebhookRow.id))
            return [_webhook(r) for r in rows]

    async def get(self, webhook_id: int) -> Webhook:
        async with self._sessions.read() as session:
            row = await session.get(WebhookRow, webhook_id)
            if row is None:
                raise NotFound(f"webhook {webhook_id} not found")
            return _webhook(row)

    async def delete(
        self,
        webhook_id: int,
        *,
        actor: str,
        guard: Callable[[Webhook], None] | None = None,
    ) -> None:
        async with self._sessions.write() as session:
            row = await session.get(WebhookRow, webhook_id, with_for_update=True)
            if row is None:
                raise NotFound(f"webhook {webhook_id} not found")
            before = _webhook(row)
            if guard is not None:
                guard(before)
            resource = f"webhook/{webhook_id}"
            self._sessions.audit(
                session, actor, "webhook.delete", resource, shown(before), None
            )
            await session.delete(row)
            await self._sessions.bump(session)

    async def lease(self, webhook_id: int, owner: str, seconds: float) -> bool:
        """Whether `owner` (one API process) sends for this webhook for the
        next `seconds`: several API processes never deliver an event twice."""
        now = self._sessions.clock()
        async with self._sessions.write() as session:
            result = await session.execute(
                update(WebhookRow)
                .where(
                    WebhookRow.id == webhook_id,
                    or_(
                        WebhookRow.lease_owner == owner,
                        WebhookRow.lease_until.is_(None),
                        WebhookRow.lease_until < from_epoch(now),
                    ),
                )
                .values(lease_owner=owner, lease_until=from_epoch(now + seconds))
            )
            return bool(getattr(result, "rowcount", 0))

    async def advance(self, webhook_id: int, event_id: int) -> None:
        async with self._sessions.write() as session:
            await session.execute(
                update(WebhookRow)
                .where(WebhookRow.id == webhook_id, WebhookRow.cursor < event_id)
                .values(cursor=event_id)
            )

    async def log(self, webhook_id: int, delivery: Delivery) -> None:
        """One try, in the log; the oldest past DELIVERIES_KEPT go."""
        async with self._sessions.write() as session:
            if await session.get(WebhookRow, webhook_id) is None:
                return  # deleted while the delivery ran
            fields = asdict(delivery) | {"at": from_epoch(delivery.at)}
            session.add(WebhookDeliveryRow(webhook_id=webhook_id, **fields))
            await session.flush()
            keep = (
                select(WebhookDeliveryRow.id)
                .where(WebhookDeliveryRow.webhook_id == webhook_id)
                .order_by(WebhookDeliveryRow.id.desc())
                .limit(DELIVERIES_KEPT)
            )
            await session.execute(
                delete(WebhookDeliveryRow).where(
                    WebhookDeliveryRow.webhook_id == webhook_id,
                    WebhookDeliveryRow.id.not_in(keep.scalar_subquery()),
                )
            )

    async def deliveries(self, webhook_id: int) -> list[Delivery]:
        await self.get(webhook_id)  # NotFound for an unknown webhook
        async with self._sessions.read() as session:
            rows = await session.scalars(
                select(WebhookDeliveryRow)
                .where(WebhookDeliveryRow.webhook_id == webhook_id)
                .order_by(WebhookDeliveryRow.id.desc())
            )
            return [
                Delivery(
                    r.event_id,
                    r.kind,
                    r.attempt,
                    to_epoch(r.at) or 0.0,
                    r.status,
                    r.outcome,
                    r.error,
                )
                for r in rows
            ]

"""Pre-encoded replies (app.dns.replies): the memo of encoded answers that the
client blocks of one snapshot share stays bounded, and never changes a reply."""

from __future__ import annotations

import dns.message
import pytest

from app.dns import replies
from app.dns.replies import EDNS, WireMemo, encoded
from app.dns.wire import parse_query
from app.domain.variants import variants
from tests.unit.dns.support import ADDRESSES, SNAPSHOT


def test_the_memo_of_encoded_answers_starts_over_at_its_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Clients in many networks share one memo of encodings (so a new block
    rarely encodes anything); forged ECS addresses must not grow it without
    end. At MAX_MEMO it starts over, and every entry is still the reply an
    encoding without a memo gives."""
    monkeypatch.setattr(replies, "MAX_MEMO", 2)
    memo: WireMemo = {}
    for name in ("a", "b", "c", "a"):
        wire = dns.message.make_query(f"{name}.tm.example.", "A", use_edns=0)
        query = parse_query(wire.to_wire())
        found = variants(SNAPSHOT, query.qname, query.qtype)
        assert found is not None
        entry = encoded(query, EDNS, found, memo)
        assert entry == encoded(query, EDNS, found)
        ((stored, _scope),) = entry.replies
        answer = dns.message.from_wire(stored).answer
        assert [rd.to_text() for rd in answer[0]] == [ADDRESSES[name]]
        assert len(memo) <= 2
    assert len(memo) == 2  # "c", then "a" again after starting over

"""The property every DNS message must satisfy, shared by the coverage-guided
fuzzer and the regression replay: the decoder either decodes or says Malformed,
and the handler answers with a well-formed reply (or silence), never SERVFAIL.
"""

from __future__ import annotations

import contextlib
import logging
from ipaddress import ip_address
from random import Random

import dns.exception
import dns.message
import dns.rcode

from app.dns.handler import make_handler
from app.dns.wire import Malformed, parse_query
from app.domain.model import Config, Method, SrvService
from app.domain.snapshot import compile_snapshot
from tests.builders import make_endpoint, make_profile, make_zone

PEER = ("127.0.0.1", 53000)
_ZONE = make_zone(
    make_profile(
        "app",
        Method.PRIORITY,
        make_endpoint("primary", "127.0.0.1", id=1),
        make_endpoint("six", "::1", priority=2, id=2),
        srv=(SrvService("_sip._udp", 5060),),
    ),
    make_profile("web", Method.WEIGHTED, make_endpoint("w", "127.0.0.3", id=3)),
    glue=(("ns1.tm.example.", ip_address("127.0.0.1")),),
)
SNAPSHOT = compile_snapshot(Config((_ZONE,)), {}, 1, 0.0)


class ServerBug(AssertionError):
    """The input made the server misbehave; the input is a regression case."""


class _Failures(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        raise ServerBug(record.getMessage())


def make_checker() -> object:
    handle = make_handler(lambda: SNAPSHOT, Random(7), lambda: 0.0, lambda _ip: None)
    # The handler turns an internal exception into SERVFAIL and logs it: for the
    # fuzzer, that log line is the crash.
    logging.getLogger("app.dns.handler").addHandler(_Failures())

    def check(data: bytes) -> None:
        with contextlib.suppress(Malformed):  # the only exception it may raise
            parse_query(data)
        for udp in (True, False):
            reply = handle(data, PEER, udp)
            if reply is None:
                continue
            try:
                parsed = dns.message.from_wire(reply, ignore_trailing=False)
            except dns.exception.DNSException as exc:
                raise ServerBug(f"reply does not parse: {exc!r}") from exc
            if parsed.rcode() == dns.rcode.SERVFAIL:
                raise ServerBug("SERVFAIL")
            if udp and len(reply) > 1232:
                raise ServerBug(f"UDP reply of {len(reply)} octets")

    return check

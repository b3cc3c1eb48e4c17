"""100,000 random and mutated packets at a running tmdns, over UDP and TCP; then it
must still be alive and answer correctly."""

import contextlib
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from random import Random

import dns.message
import dns.query
import pytest

from tests.support.process import ServedDemo, serve_demo

pytestmark = pytest.mark.e2e
UDP_PACKETS, TCP_PACKETS = 80_000, 20_000
BATCH = 100
TIME_LIMIT = 180.0

VALID = [
    dns.message.make_query(name, rtype, use_edns=edns).to_wire()
    for name, rtype, edns in [
        ("app.tm.example.", "A", False),
        ("web.tm.example.", "AAAA", 0),
        ("tm.example.", "SOA", 0),
        ("nothing.tm.example.", "A", False),
    ]
]


def mutate(rng: Random, packet: bytes) -> bytes:
    """One of the classic mutations: flip, overwrite, cut, splice, inflate counts."""
    data = bytearray(packet)
    choice = rng.randrange(6)
    if choice == 0:
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
    elif choice == 1:
        data[rng.randrange(len(data))] = rng.randrange(256)
    elif choice == 2:
        data = data[: rng.randrange(len(data))]
    elif choice == 3:
        i = rng.randrange(12, len(data))
        data[i:i] = bytes([0xC0 | rng.randrange(64), rng.randrange(256)])  # pointer
    elif choice == 4:
        i = rng.choice([4, 6, 8, 10])
        data[i : i + 2] = rng.randrange(1, 65536).to_bytes(2, "big")
    else:
        data += rng.randbytes(rng.randrange(1, 64))
    if len(data) >= 3:
        data[2] &= 0x7F  # keep QR clear so most packets reach the decoder
    return bytes(data)


def packets(rng: Random, count: int) -> Iterator[bytes]:
    for _ in range(count):
        if rng.random() < 0.3:
            yield rng.randbytes(rng.randrange(0, 300))
        else:
            yield mutate(rng, rng.choice(VALID))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedDemo]:
    with serve_demo(tmp_path_factory.mktemp("storm")) as served:
        yield served


def still_answers(served: ServedDemo) -> None:
    assert served.process.poll() is None, served.banner()[-2000:]
    query = dns.message.make_query("app.tm.example.", "A")
    for send in (dns.query.udp, dns.query.tcp):
        reply = send(query, "127.0.0.1", port=served.dns_port, timeout=2)
        assert [rd.to_text() for rd in reply.answer[0]] == ["127.0.0.1"]


def test_udp_storm(server: ServedDemo) -> None:
    rng, started, replies = Random(2026), time.monotonic(), 0
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.connect(("127.0.0.1", server.dns_port))
        sock.settimeout(0.01)
        batch: list[bytes] = []
        for packet in packets(rng, UDP_PACKETS):
            batch.append(packet)
            if len(batch) == BATCH:
                for item in batch:
                    sock.send(item)
                replies += _drain(sock)
                batch.clear()
                assert time.monotonic() - started < TIME_LIMIT
    assert replies > UDP_PACKETS // 10  # the server kept answering throughout
    still_answers(server)


def test_tcp_storm(server: ServedDemo) -> None:
    rng, started = Random(7766), time.monotonic()
    sent = answered = 0
    while sent < TCP_PACKETS:
        with socket.create_connection(
            ("127.0.0.1", server.dns_port), timeout=2
        ) as sock:
            frames = [next(packets(rng, 1)) for _ in range(BATCH)]
            with contextlib.suppress(OSError):
                sock.sendall(b"".join(len(f).to_bytes(2, "big") + f for f in frames))
                # Half-close: the server answers what it can, meets the end of the
                # stream, and closes; a hang here would be a bug (the timeout).
                sock.shutdown(socket.SHUT_WR)
                sock.settimeout(5)
                stream = b""
                while chunk := sock.recv(65536):
                    stream += chunk
                answered += _frames(stream)
            sent += BATCH
        assert time.monotonic() - started < TIME_LIMIT
    assert (
        answered > TCP_PACKETS // 2
    )  # every frame with a header got FORMERR or better
    still_answers(server)


def _frames(stream: bytes) -> int:
    count = offset = 0
    while offset + 2 <= len(stream):
        offset += 2 + int.from_bytes(stream[offset : offset + 2], "big")
        count += offset <= len(stream)
    return count


def _drain(sock: socket.socket) -> int:
    count = 0
    with contextlib.suppress(TimeoutError, ConnectionRefusedError):
        while True:
            sock.recv(65536)
            count += 1
    return count


def test_the_log_shows_no_internal_error(server: ServedDemo, tmp_path: Path) -> None:
    still_answers(server)
    assert "Traceback" not in server.banner()
    assert "failed to answer" not in server.banner()

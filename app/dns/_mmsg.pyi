"""The boundary of the optional C module app/dns/_mmsg.c."""

MAX_BATCH: int

def receive(fd: int, count: int, /) -> list[tuple[bytes, tuple[str, int], bytes]]:
    """Up to `count` waiting datagrams as (data, (host, port), sockaddr); []
    when none wait. Never blocks."""

def send(fd: int, replies: list[tuple[bytes, bytes]], /) -> int:
    """Send each (data, sockaddr) without blocking; how many went out."""

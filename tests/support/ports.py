"""Free loopback ports for servers the tests start."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A port free for both TCP and UDP on 127.0.0.1 at the time of asking."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as tcp:
            tcp.bind(("127.0.0.1", 0))
            port = int(tcp.getsockname()[1])
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
                try:
                    udp.bind(("127.0.0.1", port))
                except OSError:
                    continue
            return port

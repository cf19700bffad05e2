"""Free TCP ports on loopback, for the daemons the kit starts (brokers, ZooKeeper, Spark).

A port is free when the kernel hands it out for ``bind((host, 0))``; another process may take
it before the daemon binds it, so callers that can lose that race retry on a fresh port
(``capture.jvm``, ``replay.cluster``). No port is handed out twice by one process.
"""

from __future__ import annotations

import socket
import threading

__all__ = ["accepts", "free_port"]

_reserved: set[int] = set()
_reserved_lock = threading.Lock()


def free_port(host: str = "127.0.0.1") -> int:
    """A currently free TCP port on ``host`` never handed out before by this process."""
    for _ in range(200):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((host, 0))
            port: int = s.getsockname()[1]
        with _reserved_lock:
            if port not in _reserved:
                _reserved.add(port)
                return port
    raise OSError("no free port found")


def accepts(host: str, port: int, timeout: float = 0.5) -> bool:
    """Whether something accepts TCP connections on ``host:port`` now."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False

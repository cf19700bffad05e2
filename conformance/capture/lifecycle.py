"""Everything a capture starts is stopped: brokers, containers, the container engine service.

Objects with a ``stop()`` method are registered while they run (:func:`register`) and
unregistered when stopped (:func:`unregister`). At interpreter exit (``atexit``) and on
SIGINT/SIGTERM, every registered object is stopped, newest first (a broker before the engine
service it runs on). The signal handlers chain to the ones installed before them; SIGINT then
raises ``KeyboardInterrupt`` as usual, SIGTERM re-delivers itself with the default action.
"""

from __future__ import annotations

import atexit
import os
import signal
import threading
from typing import Any, Protocol

__all__ = ["Stoppable", "register", "stop_all", "unregister"]


class Stoppable(Protocol):
    def stop(self) -> None: ...


_live: list[Stoppable] = []
_lock = threading.Lock()
_installed = False
_previous: dict[int, Any] = {}


def register(obj: Stoppable) -> None:
    """Stop ``obj`` at exit or on SIGINT/SIGTERM unless :func:`unregister` ran first."""
    _install()
    with _lock:
        if not any(o is obj for o in _live):
            _live.append(obj)


def unregister(obj: Stoppable) -> None:
    with _lock:
        _live[:] = [o for o in _live if o is not obj]


def stop_all() -> None:
    """Stop every registered object, newest first; errors are swallowed (best effort)."""
    while True:
        with _lock:
            if not _live:
                return
            obj = _live.pop()
        try:
            obj.stop()
        except Exception:  # pragma: no cover - best effort at exit
            pass


def _on_signal(signum: int, frame: Any) -> None:
    stop_all()
    previous = _previous.get(signum)
    if callable(previous):
        previous(signum, frame)
    elif previous == signal.SIG_IGN:
        return
    else:
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)


def _install() -> None:
    global _installed
    if _installed:
        return
    atexit.register(stop_all)
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGINT, signal.SIGTERM):
            try:
                _previous[signum] = signal.getsignal(signum)
                signal.signal(signum, _on_signal)
            except (ValueError, OSError):  # pragma: no cover
                pass
    _installed = True

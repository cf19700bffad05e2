"""What a ``with`` block does to the kit's long-lived things: the one ``__enter__`` and
``__exit__`` of a progress display, a fake broker, an oracle JVM, a Spark cluster, a capture
broker.

* :class:`Closing`: ``with thing:`` gives the thing and calls its ``close()`` however the
  block ends (an exception, Ctrl-C, ``TerminatedBySignal``);
* :class:`Started`: the same, and ``start()`` first;
* :class:`Service`: ``start()`` first and ``stop()`` at the end (``close()`` is ``stop()``);
* :class:`Running`: a thing started before the block, ``stop()`` at the end (``close()`` is
  ``stop()``), and ``stop(timeout=10)`` as a last resort when it is collected unstopped.

A subclass defines the methods it names; these only say when they run. Stdlib only: this is
the ``host`` layer.
"""

from __future__ import annotations

from types import TracebackType
from typing import Self

__all__ = ["Closing", "Running", "Service", "Started"]


class Closing:
    """``with thing:`` gives ``thing``, and ``thing.close()`` runs however the block ends."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class Started(Closing):
    """``with thing:`` calls ``thing.start()``, gives ``thing`` and closes it at the end."""

    def start(self) -> object:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.start()
        return self


class Service(Started):
    """``with service:`` starts it, gives it and stops it (``stop()``) however the block
    ends; ``close()`` is ``stop()``."""

    def stop(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        self.stop()


class Running(Closing):
    """``with thing:`` gives ``thing``, started before the block, and stops it (``stop()``)
    however the block ends; ``close()`` is ``stop()``. Collected while ``_stopped`` is still
    False, it is stopped then (``stop(timeout=10)``, errors swallowed): a last resort."""

    _stopped: bool

    def stop(self, timeout: float = 10.0) -> None:
        raise NotImplementedError

    def close(self) -> None:
        self.stop()

    def __del__(self) -> None:  # pragma: no cover - last resort
        try:
            if not self._stopped:
                self.stop(timeout=10)
        except Exception:
            pass

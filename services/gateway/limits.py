"""Limits a hostile or careless client cannot get past, beside the body size aiohttp bounds
(BERTH_GATEWAY_MAX_BODY_BYTES):

- objects per request (BERTH_GATEWAY_MAX_OBJECTS): an apply or create body holds at most so many
  objects, refused with 413 before anything is validated or published;
- the time to send a body (BERTH_GATEWAY_BODY_TIMEOUT_S): a client that trickles its body is
  answered 408 and its connection closed, before any handler runs;
- concurrent long-lived streams (follows of the event log, watches), per client address
  (BERTH_GATEWAY_MAX_STREAMS_PER_CLIENT) and in all (BERTH_GATEWAY_MAX_STREAMS): one more is 429
  with a Retry-After.

Slow headers are aiohttp's: its keep-alive timer, started when a connection opens and after each
answer, closes a connection whose next request's headers are not complete by then (app.KEEPALIVE_S).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator

from aiohttp import web
from aiohttp.typedefs import Middleware

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
Refusal = Callable[[int, str, str], web.StreamResponse]


class LimitExceeded(Exception):
    """A request refused by a limit, answered as a Kubernetes Status with this code and reason."""

    def __init__(self, code: int, reason: str, message: str, *, retry_after_s: int | None = None) -> None:
        super().__init__(message)
        self.code, self.reason, self.retry_after_s = code, reason, retry_after_s


def check_objects(count: int, limit: int) -> None:
    """Refuse a body of more than `limit` objects: each is validated, answered and published, so
    their number, not the body's bytes, bounds what one request costs."""
    if count > limit:
        raise LimitExceeded(413, "RequestEntityTooLarge",
                            f"the request body holds {count} objects, more than the {limit} one request may "
                            "hold (BERTH_GATEWAY_MAX_OBJECTS): send them in batches, as `berth apply` does")


def body_timeout(timeout_s: float, refuse: Refusal) -> Middleware:
    """Reads a request's body before its handler runs, within `timeout_s` for the whole of it: a
    slow client otherwise holds a handler, a connection and its buffered bytes for as long as it
    likes. The handlers' own `read()` gets the body from aiohttp's cache."""

    @web.middleware
    async def read_body(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.body_exists:
            try:
                await asyncio.wait_for(request.read(), timeout_s)
            except TimeoutError:
                response = refuse(408, "Timeout", f"the request body did not arrive within {timeout_s:g} s "
                                                  "(BERTH_GATEWAY_BODY_TIMEOUT_S)")
                response.force_close()  # the rest of the body may never come: no next request on it
                return response
            except web.HTTPRequestEntityTooLarge as exc:
                return refuse(413, "RequestEntityTooLarge", f"{exc.text} (BERTH_GATEWAY_MAX_BODY_BYTES)")
        return await handler(request)

    return read_body


FOLLOW_RETRY_AFTER_S = 5
"""What a refused stream is told to wait: a stream ends when its client goes or its timeoutSeconds
pass, which the gateway cannot foresee."""


class StreamSlots:
    """Concurrent streams (follows of the event log, watches of pods and nodes), each of which polls
    the database several times a second for as long as its client stays: at most `per_client` per
    remote address (the only identity a token does not share; behind a proxy every client is the
    proxy's address) and at most `total` in all, so that streams cannot take the database pool from
    the API."""

    def __init__(self, per_client: int, total: int) -> None:
        self.per_client, self.total = per_client, total
        self._held: Counter[str] = Counter()

    def held(self, client: str) -> int:
        return self._held[client]

    @contextlib.contextmanager
    def slot(self, client: str) -> Iterator[None]:
        """One slot for `client` while the stream runs, freed however it ends; LimitExceeded (429)
        when none is free."""
        if self._held[client] >= self.per_client:
            raise LimitExceeded(429, "TooManyRequests",
                                f"{client or 'this client'} already holds {self._held[client]} streams (event "
                                "log follows and watches), the most one client may "
                                "(BERTH_GATEWAY_MAX_STREAMS_PER_CLIENT): end one first",
                                retry_after_s=FOLLOW_RETRY_AFTER_S)
        if self._held.total() >= self.total:
            raise LimitExceeded(429, "TooManyRequests",
                                f"the gateway serves {self.total} streams (event log follows and watches), "
                                "the most it may (BERTH_GATEWAY_MAX_STREAMS)", retry_after_s=FOLLOW_RETRY_AFTER_S)
        self._held[client] += 1
        try:
            yield
        finally:
            self._held[client] -= 1
            if not self._held[client]:
                del self._held[client]

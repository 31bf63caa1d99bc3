"""Limits a hostile or careless client cannot get past, beside the body size aiohttp bounds
(BERTH_GATEWAY_MAX_BODY_BYTES):

- objects per request (BERTH_GATEWAY_MAX_OBJECTS): an apply or create body holds at most so many
  objects, refused with 413 before anything is validated or published.
"""

from __future__ import annotations


class LimitExceeded(Exception):
    """A request refused by a limit, answered as a Kubernetes Status with this code and reason."""

    def __init__(self, code: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.code, self.reason = code, reason


def check_objects(count: int, limit: int) -> None:
    """Refuse a body of more than `limit` objects: each is validated, answered and published, so
    their number, not the body's bytes, bounds what one request costs."""
    if count > limit:
        raise LimitExceeded(413, "RequestEntityTooLarge",
                            f"the request body holds {count} objects, more than the {limit} one request may "
                            "hold (BERTH_GATEWAY_MAX_OBJECTS): send them in batches, as `berth apply` does")

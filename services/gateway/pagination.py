"""The `continue` token of a paged list: where the last page ended, opaque to clients."""

from __future__ import annotations

import base64
import binascii
import json

from shared.errors import InvalidInput


def encode(after: list[str]) -> str:
    return base64.urlsafe_b64encode(json.dumps({"after": after}).encode()).decode()


def decode(token: str) -> list[str]:
    """The position a token names; a token the gateway did not make is refused (the API server
    answers such a one 400 as well)."""
    try:
        after = json.loads(base64.urlsafe_b64decode(token.encode()))["after"]
    except (ValueError, KeyError, TypeError, binascii.Error):
        raise InvalidInput("request", "continue", "not a continue token from an earlier list") from None
    if not isinstance(after, list) or not all(isinstance(a, str) for a in after):
        raise InvalidInput("request", "continue", "not a continue token from an earlier list")
    return after

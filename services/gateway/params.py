"""Query parameters the API server gives the same meaning on every route."""

from __future__ import annotations

from aiohttp import web

from shared.errors import InvalidInput


def dry_run(request: web.Request) -> bool:
    """The API server's dryRun parameter: All (kubectl's --dry-run=server), or absent; anything
    else is refused."""
    given = request.query.get("dryRun", "")
    if given not in ("", "All"):
        raise InvalidInput("request", "dryRun", f"unsupported value {given!r}: All")
    return given == "All"


def whole_number(text: str, name: str) -> int:
    """A non-negative integer in ASCII digits (str.isdigit would take '²' and int() then fail)."""
    if not (text.isascii() and text.isdigit()):
        raise InvalidInput("request", name, f"must be a non-negative integer, got {text!r}")
    return int(text)

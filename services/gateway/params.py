"""Query parameters the API server gives the same meaning on every route."""

from __future__ import annotations

from aiohttp import web

from shared.errors import InvalidInput

from .protobuf_body import body_json

DELETE_DRY_RUN = web.RequestKey("berth.delete_dry_run", bool)
"""Where `read_delete_options` keeps a DELETE body's dryRun for `dry_run`."""


def dry_run(request: web.Request) -> bool:
    """The API server's dryRun parameter: All (kubectl's --dry-run=server), or absent; anything
    else is refused. A DELETE may say it in its body instead (`read_delete_options`)."""
    given = request.query.get("dryRun", "")
    if given not in ("", "All"):
        raise InvalidInput("request", "dryRun", f"unsupported value {given!r}: All")
    return given == "All" or bool(request.get(DELETE_DRY_RUN, False))


async def read_delete_options(request: web.Request) -> None:
    """A DELETE's body, DeleteOptions, where kubectl puts its dryRun (`delete --dry-run=server`
    sends `{"dryRun": ["All"]}` and no query parameter): its dryRun counts as the query's.
    The other options (grace period, propagation, preconditions) change nothing here: a pod is
    deleted at once, and nothing is owned by another object."""
    if request.method != "DELETE" or not request.can_read_body:
        return
    raw = await request.read()
    if not raw.strip():
        return
    try:
        options = body_json(raw, request.content_type)  # kubectl drain's deletes send theirs in protobuf
    except ValueError:
        raise InvalidInput("request body", "DeleteOptions", "must be a JSON object") from None
    if not isinstance(options, dict):
        raise InvalidInput("request body", "DeleteOptions", "must be a JSON object")
    given = options.get("dryRun") or []
    if not isinstance(given, list) or any(value != "All" for value in given):
        raise InvalidInput("request body", "dryRun", f"unsupported value {given!r}: All")
    request[DELETE_DRY_RUN] = "All" in given


def whole_number(text: str, name: str) -> int:
    """A non-negative integer in ASCII digits (str.isdigit would take '²' and int() then fail)."""
    if not (text.isascii() and text.isdigit()):
        raise InvalidInput("request", name, f"must be a non-negative integer, got {text!r}")
    return int(text)

"""The gateway's error Status as the CLI reports it: one line, and an exit code that tells bad input
(2: an invalid object, or a request the gateway cannot read) from anything else (1)."""

from __future__ import annotations

import io
import json
import urllib.error
from email.message import Message

import pytest

from berth.client import EXIT_ERROR, EXIT_INVALID_INPUT, _status_error


def _refused(code: int, message: str | None, reason: str = "") -> urllib.error.HTTPError:
    body = json.dumps({"kind": "Status", "message": message}).encode() if message is not None else b"<html>"
    return urllib.error.HTTPError("https://gateway/api/v1/pods", code, reason, Message(), io.BytesIO(body))


@pytest.mark.parametrize(("code", "exit_code"), [
    (400, EXIT_INVALID_INPUT),  # a selector that does not parse
    (422, EXIT_INVALID_INPUT),  # an invalid object
    (404, EXIT_ERROR),
    (409, EXIT_ERROR),
    (503, EXIT_ERROR),
])
def test_bad_input_exits_2_and_the_rest_1(code: int, exit_code: int) -> None:
    error = _status_error(_refused(code, "request: labelSelector: unable to parse requirement: 'app in web'"))
    assert error.exit_code == exit_code
    assert str(error) == "error: request: labelSelector: unable to parse requirement: 'app in web'"


def test_a_body_that_is_no_status_is_named_by_its_http_code() -> None:
    assert str(_status_error(_refused(502, None, "Bad Gateway"))) == "error: HTTP 502 Bad Gateway"


def test_an_unauthorized_answer_says_where_the_token_comes_from() -> None:
    assert "check BERTH_TOKEN" in str(_status_error(_refused(401, "Unauthorized")))

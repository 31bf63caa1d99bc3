"""kubectl's -l syntax (labels.Parse), as `berth get -l` and the gateway's labelSelector read it."""

from __future__ import annotations

import pytest

from shared.model.selectors import parse_selector

WEB = {"app": "web", "tier": "front"}


@pytest.mark.parametrize(("text", "matches"), [
    ("", True),
    ("app=web", True),
    ("app==web", True),
    ("app!=web", False),
    ("app!=db", True),
    ("app=web,tier=back", False),
    ("tier in (front, back)", True),
    ("tier notin (front)", False),
    ("tier in (back),app=web", False),
    ("app", True),
    ("!app", False),
    ("!gone", True),
    ("gone", False),
    ("gone!=x", True),
    (" app = web , tier in (front) ", True),
])
def test_requirements(text: str, matches: bool) -> None:
    assert parse_selector(text).matches(WEB) is matches


@pytest.mark.parametrize("text", ["app in web", "a=b=c", "tier in (a", "(x)", "a b"])
def test_what_does_not_parse_is_named(text: str) -> None:
    with pytest.raises(ValueError, match="unable to parse requirement"):
        parse_selector(text)

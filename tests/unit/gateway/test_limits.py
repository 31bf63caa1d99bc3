"""The gateway's request limits: their settings and the checks behind them, without a server."""

from __future__ import annotations

import pytest

from services.gateway.limits import LimitExceeded, check_objects
from services.gateway.settings import BODY_TIMEOUT_S, MAX_OBJECTS, load
from shared.errors import ConfigurationError

TOKEN = {"BERTH_API_TOKEN": "t"}


def test_the_limits_have_defaults_and_read_their_variables() -> None:
    defaults = load(TOKEN)
    assert (defaults.max_objects, defaults.body_timeout_s) == (MAX_OBJECTS, BODY_TIMEOUT_S) == (10_000, 30.0)
    assert load({**TOKEN, "BERTH_GATEWAY_MAX_OBJECTS": "50"}).max_objects == 50
    assert load({**TOKEN, "BERTH_GATEWAY_BODY_TIMEOUT_S": "2.5"}).body_timeout_s == 2.5
    with pytest.raises(ConfigurationError, match="BERTH_GATEWAY_MAX_OBJECTS='0': must be at least 1"):
        load({**TOKEN, "BERTH_GATEWAY_MAX_OBJECTS": "0"})


def test_a_body_may_hold_up_to_the_cap_and_no_more() -> None:
    check_objects(3, 3)
    with pytest.raises(LimitExceeded) as refused:
        check_objects(4, 3)
    assert (refused.value.code, refused.value.reason) == (413, "RequestEntityTooLarge")
    assert "holds 4 objects, more than the 3" in str(refused.value)

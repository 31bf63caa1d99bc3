"""The gateway's request limits: their settings and the checks behind them, without a server."""

from __future__ import annotations

import pytest

from services.gateway.limits import LimitExceeded, StreamSlots, check_objects
from services.gateway.settings import BODY_TIMEOUT_S, MAX_OBJECTS, MAX_STREAMS, MAX_STREAMS_PER_CLIENT, load
from shared.errors import ConfigurationError

TOKEN = {"BERTH_API_TOKEN": "t"}


def test_the_limits_have_defaults_and_read_their_variables() -> None:
    defaults = load(TOKEN)
    assert (defaults.max_objects, defaults.body_timeout_s) == (MAX_OBJECTS, BODY_TIMEOUT_S) == (10_000, 30.0)
    assert load({**TOKEN, "BERTH_GATEWAY_MAX_OBJECTS": "50"}).max_objects == 50
    assert load({**TOKEN, "BERTH_GATEWAY_BODY_TIMEOUT_S": "2.5"}).body_timeout_s == 2.5
    assert (defaults.max_streams_per_client, defaults.max_streams) == (MAX_STREAMS_PER_CLIENT, MAX_STREAMS) == (4, 32)
    follows = load({**TOKEN, "BERTH_GATEWAY_MAX_STREAMS_PER_CLIENT": "1", "BERTH_GATEWAY_MAX_STREAMS": "8"})
    assert (follows.max_streams_per_client, follows.max_streams) == (1, 8)
    with pytest.raises(ConfigurationError, match="BERTH_GATEWAY_MAX_OBJECTS='0': must be at least 1"):
        load({**TOKEN, "BERTH_GATEWAY_MAX_OBJECTS": "0"})


def test_a_body_may_hold_up_to_the_cap_and_no_more() -> None:
    check_objects(3, 3)
    with pytest.raises(LimitExceeded) as refused:
        check_objects(4, 3)
    assert (refused.value.code, refused.value.reason) == (413, "RequestEntityTooLarge")
    assert "holds 4 objects, more than the 3" in str(refused.value)


def test_follow_slots_are_capped_per_client_and_in_all_and_freed_however_a_stream_ends() -> None:
    slots = StreamSlots(per_client=2, total=3)
    with slots.slot("10.0.0.1"), slots.slot("10.0.0.1"):
        with pytest.raises(LimitExceeded, match="BERTH_GATEWAY_MAX_STREAMS_PER_CLIENT") as refused:
            with slots.slot("10.0.0.1"):
                pass
        assert (refused.value.code, refused.value.retry_after_s) == (429, 5)
        with slots.slot("10.0.0.2"):
            with pytest.raises(LimitExceeded, match="BERTH_GATEWAY_MAX_STREAMS"):
                with slots.slot("10.0.0.3"):
                    pass
    with pytest.raises(ConnectionResetError), slots.slot("10.0.0.1"):
        raise ConnectionResetError
    assert slots.held("10.0.0.1") == 0
    with slots.slot("10.0.0.3"):
        assert slots.held("10.0.0.3") == 1

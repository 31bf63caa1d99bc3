"""Settings from the environment: one typed helper per kind of value, a clear error for a bad one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from services.binder.settings import load as load_binder
from services.filter.settings import load as load_filter
from services.gateway.settings import load as load_gateway
from services.preemption.settings import load as load_preemption
from services.projector.app import build as build_projector
from services.projector.settings import load as load_projector
from services.queue.settings import load as load_queue
from shared.errors import ConfigurationError
from shared.settings import env_flag, env_flag_or_auto, env_float, env_int, env_str


def test_each_helper_reads_its_kind_or_falls_back_to_the_default() -> None:
    env = {"A": " 7 ", "B": "0.5", "C": "yes", "D": "  ", "E": "name"}
    assert env_int(env, "A", 1) == 7 and env_int(env, "D", 1) == 1
    assert env_float(env, "B", 1.0) == 0.5 and env_float(env, "X", 2.5) == 2.5
    assert env_flag(env, "C") is True and env_flag(env, "D") is False and env_flag(env, "X", True) is True
    assert env_str(env, "E", "d") == "name" and env_str(env, "D", "d") == "d"
    assert env_flag_or_auto({"F": " Auto "}, "F") is None and env_flag_or_auto(env, "C") is True
    assert env_flag_or_auto(env, "D") is False


@pytest.mark.parametrize(("load", "env", "message"), [
    (load_queue, {"BERTH_QUEUE_BATCH": "many"}, "BERTH_QUEUE_BATCH='many': expected an integer"),
    (load_queue, {"BERTH_QUEUE_BATCH": "0"}, "BERTH_QUEUE_BATCH='0': must be at least 1"),
    (load_queue, {"BERTH_QUEUE_LOCKSTEP": "maybe"}, "BERTH_QUEUE_LOCKSTEP='maybe': expected one of"),
    (load_queue, {"BERTH_QUEUE_PROPOSE": "sometimes"}, "BERTH_QUEUE_PROPOSE='sometimes': expected one of"),
    (load_queue, {"BERTH_UNSCHEDULABLE_TIMEOUT_S": "soon"}, "BERTH_UNSCHEDULABLE_TIMEOUT_S='soon': expected a number"),
    (load_projector, {"BERTH_PROJECTOR_BATCH_RECORDS": "0"}, "BERTH_PROJECTOR_BATCH_RECORDS='0': must be at least 1"),
    (load_gateway, {"BERTH_API_TOKEN": "t", "BERTH_METRICS_AUTH": "perhaps"}, "BERTH_METRICS_AUTH='perhaps'"),
    (load_gateway, {"BERTH_API_TOKEN": "t", "BERTH_TLS_CERT_FILE": "c.pem"}, "BERTH_TLS_KEY_FILE go together"),
], ids=["integer", "minimum", "flag", "propose", "number", "projector batch", "gateway flag",
        "certificate without key"])
def test_a_bad_value_names_the_variable_and_what_it_wants(load: Callable[[dict[str, str]], object],
                                                          env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message.replace("(", r"\(")):
        load(env)


def test_services_keep_their_defaults_when_nothing_is_set() -> None:
    settings = load_queue({})
    options = settings.options
    assert (settings.group_id, options.batch_size, options.lockstep, options.unschedulable_timeout_s,
            options.preemption_timeout_s) == ("berth-queue", 1024, False, 300.0, 300.0)


@pytest.mark.parametrize(("service", "load"), [
    ("binder", load_binder), ("filter", load_filter), ("preemption", load_preemption),
    ("projector", load_projector), ("queue", load_queue),
])
def test_each_service_is_named_after_itself_and_reads_its_own_group(service: str,
                                                                    load: Callable[[dict[str, str]], Any]) -> None:
    settings = load({})
    assert (settings.base.service_name, settings.group_id) == (service, f"berth-{service}")
    told = load({f"BERTH_{service.upper()}_GROUP": "mine", "BERTH_SERVICE": "named"})
    assert (told.base.service_name, told.group_id) == ("named", "mine")


def test_the_projector_asks_for_full_batches_unless_told_otherwise() -> None:
    settings = load_projector({})
    assert (settings.batch_records, settings.fetch_min_bytes) == (2000, 512 * 1024)
    config = build_projector(settings, engine=None, serve_http=False).config  # type: ignore[arg-type]  # not started: no engine used
    assert (config.max_records, config.fetch_min_bytes) == (2000, 512 * 1024)
    told = load_projector({"BERTH_PROJECTOR_BATCH_RECORDS": "100", "BERTH_PROJECTOR_FETCH_MIN_BYTES": "1"})
    assert (told.batch_records, told.fetch_min_bytes) == (100, 1)

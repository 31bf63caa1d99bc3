"""Every bad input of `tests/inputs/bad_objects.py` through the gateway's apply: HTTP 422, a Status
whose message names the object, the field and the rule, and nothing published."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp.test_utils import TestClient, TestServer
from sqlalchemy.ext.asyncio import AsyncEngine

from services.gateway.app import build_app
from services.gateway.settings import GatewaySettings
from shared.adapters.kafka import KafkaPublisher
from shared.adapters.postgres import AcceptedIntents
from tests.inputs.bad_objects import BAD, Bad

from .fixtures import BerthTestEnv

pytestmark = pytest.mark.integration

TOKEN = "s3cret"
AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/yaml"}


@pytest.fixture
async def client(berth_env: BerthTestEnv, engine: AsyncEngine, publisher: KafkaPublisher) -> AsyncIterator[TestClient]:
    settings = GatewaySettings(base=berth_env.settings.for_service("gateway"), api_token=TOKEN,
                               readable_within_s=0)  # no projector: a write is never read back
    client = TestClient(TestServer(build_app(settings, publisher, engine, registry=berth_env.registry)),
                        headers={"Authorization": f"Bearer {TOKEN}"})
    await client.start_server()
    try:
        yield client
    finally:
        await client.close()


async def test_the_gateway_refuses_every_bad_input(client: TestClient, engine: AsyncEngine) -> None:
    wrong: list[str] = []
    for case in BAD:
        resp = await client.post("/apis/berth.dev/v1/apply", data=case.data(), headers=AUTH)
        body = await resp.json()
        if resp.status != 422 or body.get("message") != case.expected("request body", gateway=True):
            wrong.append(f"{case.id}: {resp.status} {body.get('message')!r}")
    assert not wrong, "\n".join(wrong)
    assert await AcceptedIntents(engine).unstored() == [], "nothing of a refused body was published"


async def test_unknown_fields_warn_when_asked(client: TestClient) -> None:
    typo: Bad = next(c for c in BAD if c.id == "typo-nodeSelector")
    resp = await client.post("/apis/berth.dev/v1/apply?fieldValidation=Warn", data=typo.data(), headers=AUTH)
    assert resp.status == 200, await resp.text()
    assert resp.headers.getall("Warning") == ['299 - "Pod web: unknown field \\"spec.nodeSelectr\\""']
    bad_mode = await client.post("/apis/berth.dev/v1/apply?fieldValidation=Sometimes", data=typo.data(), headers=AUTH)
    assert bad_mode.status == 422
    assert (await bad_mode.json())["message"] == (
        "request: fieldValidation: unsupported value 'Sometimes': Strict, Warn, Ignore")

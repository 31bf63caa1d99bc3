"""OpenAPI v3 documents of what the gateway serves, as the API server publishes them.

    GET /openapi/v2                        Swagger 2.0: every group version in one document
                                           (JSON, or protobuf as kubectl asks: `openapi_protobuf`)
    GET /openapi/v3                        the index: one document per group version
    GET /openapi/v3/api/v1                 (and apis/<group>/<version>) paths and schemas

kubectl reads them before create and apply: a PATCH operation of the object's kind that takes
`fieldValidation` tells it the server validates fields itself (Berth does, strictly by default),
and `kubectl explain` walks the schemas. The schemas come from `shared/model/api_fields.json`
(every field of every type the kinds reach, with its scalar type), named as upstream names them.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from typing import Any

from aiohttp import web

from shared.errors import NotFound
from shared.model.api_fields import schema_data

from . import openapi_protobuf
from .discovery import KUBERNETES_VERSION, RESOURCES, Resource

META_TYPES = frozenset({"ObjectMeta", "OwnerReference", "ManagedFieldsEntry", "LabelSelector",
                        "LabelSelectorRequirement", "Condition"})
SCALAR_SCHEMAS: dict[str, dict[str, Any]] = {
    "str": {"type": "string"}, "int": {"type": "integer", "format": "int64"}, "float": {"type": "number"},
    "bool": {"type": "boolean"}, "datetime": {"type": "string", "format": "date-time"},
    "date": {"type": "string", "format": "date"}, "bytearray": {"type": "string", "format": "byte"},
    "object": {"x-kubernetes-int-or-string": True}, "Dict[str, object]": {"type": "object"},
}
WRITE_PARAMETERS = ("dryRun", "fieldManager", "fieldValidation")


def schema_name(model: str) -> str:
    """The client's model name (V1PodSpec) as upstream names the schema (io.k8s.api.core.v1.PodSpec)."""
    name = model.removeprefix("CoreV1").removeprefix("V1")
    if name in META_TYPES:
        return f"io.k8s.apimachinery.pkg.apis.meta.v1.{name}"
    if name.startswith("PodDisruptionBudget"):
        return f"io.k8s.api.policy.v1.{name}"
    if name == "PriorityClass":
        return f"io.k8s.api.scheduling.v1.{name}"
    return f"io.k8s.api.core.v1.{name}"


def _ref(model: str) -> dict[str, Any]:
    return {"allOf": [{"$ref": f"#/components/schemas/{schema_name(model)}"}], "default": {}}


def _field(ref: Any, scalar: str) -> dict[str, Any]:
    if ref == "scalar":
        return dict(SCALAR_SCHEMAS.get(scalar, {"type": "string"}))
    if isinstance(ref, list):
        inner = _field(ref[1], scalar)
        return {"type": "array", "items": inner} if ref[0] == "list" else {"type": "object",
                                                                           "additionalProperties": inner}
    return _ref(str(ref))


@cache
def schemas() -> dict[str, dict[str, Any]]:
    data = schema_data()
    kinds = {model: kind for kind, model in data["roots"].items()}
    out: dict[str, dict[str, Any]] = {}
    for model, fields in data["types"].items():
        scalars = data.get("scalars", {}).get(model, {})
        schema: dict[str, Any] = {"type": "object", "properties": {
            name: _field(ref, scalars.get(name, "str")) for name, ref in sorted(fields.items())}}
        if model in kinds:
            resource = next(r for r in RESOURCES if r.kind == kinds[model])
            schema["x-kubernetes-group-version-kind"] = [_gvk(resource)]
            schema["description"] = f"{resource.kind}, as Berth reads it (fields it does not use are accepted)."
        out[schema_name(model)] = schema
    return out


def _gvk(r: Resource) -> dict[str, str]:
    return {"group": r.group, "version": r.version, "kind": r.kind}


def _parameter(name: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "schema": {"type": "string", "uniqueItems": True}}


def _operation(r: Resource, action: str, body: bool) -> dict[str, Any]:
    op: dict[str, Any] = {"operationId": f"{action}{r.kind}", "x-kubernetes-action": action,
                          "x-kubernetes-group-version-kind": _gvk(r),
                          "responses": {"200": {"description": "OK"}}}
    if body:
        op["parameters"] = [_parameter(p) for p in WRITE_PARAMETERS]
    return op


def _paths(r: Resource) -> dict[str, dict[str, Any]]:
    base = f"/api/{r.version}" if not r.group else f"/apis/{r.group}/{r.version}"
    collection = f"{base}/namespaces/{{namespace}}/{r.name}" if r.namespaced else f"{base}/{r.name}"
    verbs = set(r.verbs)
    listing: dict[str, Any] = {"get": _operation(r, "list", False)}
    item: dict[str, Any] = {"get": _operation(r, "get", False)}
    if "create" in verbs:
        listing["post"] = _operation(r, "post", True)
    if "update" in verbs:
        item["put"] = _operation(r, "put", True)
    if "patch" in verbs:
        item["patch"] = _operation(r, "patch", True)
    if "delete" in verbs:
        item["delete"] = _operation(r, "delete", False)
    return {collection: listing, f"{collection}/{{name}}": item}


def group_version_key(r: Resource) -> str:
    return f"api/{r.version}" if not r.group else f"apis/{r.group}/{r.version}"


@cache
def document(key: str) -> bytes | None:
    """The document of one group version (`api/v1`, `apis/policy/v1`), or None when none is served."""
    resources = [r for r in RESOURCES if group_version_key(r) == key]
    if not resources:
        return None
    paths: dict[str, dict[str, Any]] = {}
    for r in resources:
        paths |= _paths(r)
    major, minor = KUBERNETES_VERSION
    doc = {"openapi": "3.0.0", "info": {"title": "Berth", "version": f"v{major}.{minor}.0+berth"},
           "paths": paths, "components": {"schemas": schemas()}}
    return json.dumps(doc, sort_keys=True).encode()


def index() -> dict[str, Any]:
    keys = sorted({group_version_key(r) for r in RESOURCES})
    paths = {}
    for key in keys:
        body = document(key)
        assert body is not None
        paths[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={hashlib.sha512(body).hexdigest()[:32]}"}
    return {"paths": paths}


def _v2(value: Any) -> Any:
    """A v3 schema or operation in Swagger 2.0's terms: `#/definitions/` references, direct `$ref`
    instead of the `allOf` wrapper, query parameters typed in place."""
    if isinstance(value, list):
        return [_v2(v) for v in value]
    if not isinstance(value, dict):
        return value
    if set(value) <= {"allOf", "default"} and len(value.get("allOf", [])) == 1:
        return _v2(value["allOf"][0])
    out = {k: _v2(v) for k, v in value.items()}
    if isinstance(out.get("$ref"), str):
        out["$ref"] = out["$ref"].replace("#/components/schemas/", "#/definitions/")
    if out.get("in") == "query" and isinstance(out.get("schema"), dict):
        out |= out.pop("schema")
    return out


@cache
def _swagger() -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for r in RESOURCES:
        paths |= _paths(r)
    major, minor = KUBERNETES_VERSION
    return {"swagger": "2.0", "info": {"title": "Berth", "version": f"v{major}.{minor}.0+berth"},
            "paths": _v2(paths), "definitions": _v2(schemas())}


@cache
def swagger() -> bytes:
    """The Swagger 2.0 document (`/openapi/v2`) of every group version at once, for clients that
    read no v3 (older client libraries)."""
    return json.dumps(_swagger(), sort_keys=True).encode()


@cache
def swagger_protobuf() -> bytes:
    """The document as kubectl reads it (`openapi_protobuf`): client-side validation of a kind the
    v3 documents do not name, `kubectl explain --output plaintext-openapiv2`."""
    return openapi_protobuf.document(_swagger())


PROTOBUF = "application/com.github.proto-openapi.spec.v2"
PROTOBUF_TYPE = PROTOBUF + ".v1.0+protobuf"
"""As the API server answers: kubectl asks for `...v2@v1.0+protobuf`, which Go does not parse back."""


def install(app: web.Application) -> None:
    async def serve_index(request: web.Request) -> web.Response:
        return web.json_response(index())

    known = {group_version_key(r) for r in RESOURCES}

    async def serve_document(request: web.Request) -> web.Response:
        key = request.match_info["key"]
        body = document(key) if key in known else None  # only known keys reach the cache
        if body is None:
            raise NotFound("openapi documents", request.match_info["key"])
        return web.Response(body=body, content_type="application/json")

    async def serve_swagger(request: web.Request) -> web.Response:
        accept = request.headers.get("Accept", "")
        if PROTOBUF in accept and "json" not in accept:
            return web.Response(body=swagger_protobuf(), headers={"Content-Type": PROTOBUF_TYPE})
        return web.Response(body=swagger(), content_type="application/json")

    app.router.add_get("/openapi/v2", serve_swagger)
    app.router.add_get("/openapi/v3", serve_index)
    app.router.add_get("/openapi/v3/{key:.+}", serve_document)

"""Write shared/model/api_fields.json: the field names of the Kubernetes objects Berth reads, from the
models of the `kubernetes` client wheel (generated from the API's OpenAPI schema).

    pip download --no-deps kubernetes==37.0.2 -d /tmp/k8s && python tools/gen_api_fields.py /tmp/k8s/kubernetes-*.whl

Only the models' source is read (with `ast`), nothing is imported or installed. The JSON maps each
type reachable from the roots to its fields: JSON name → a type name, ["list", T], ["map", T] or
"scalar" (strings, numbers, quantities, int-or-strings, free-form objects), and under "scalars"
each scalar field's model type (str, int, float, bool, datetime, object: innermost for lists and
maps), from which the gateway's OpenAPI documents type them.
"""

from __future__ import annotations

import ast
import json
import re
import sys
import zipfile
from pathlib import Path

ROOTS = {"Pod": "V1Pod", "Node": "V1Node", "PriorityClass": "V1PriorityClass",
         "PodDisruptionBudget": "V1PodDisruptionBudget", "Namespace": "V1Namespace"}
SCALARS = {"str", "int", "float", "bool", "datetime", "date", "object", "bytearray", "Dict[str, object]"}
OUT = Path(__file__).resolve().parents[1] / "shared" / "model" / "api_fields.json"


def _class_dicts(source: str) -> tuple[str, dict[str, str], dict[str, str]] | None:
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            found: dict[str, dict[str, str]] = {}
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.value is not None:
                    if item.target.id in ("openapi_types", "attribute_map"):
                        found[item.target.id] = ast.literal_eval(item.value)
            if len(found) == 2:
                return node.name, found["openapi_types"], found["attribute_map"]
    return None


def _type_ref(text: str) -> object:
    if text in SCALARS:
        return "scalar"
    if m := re.fullmatch(r"List\[(.+)\]", text):
        return ["list", _type_ref(m.group(1))]
    if m := re.fullmatch(r"Dict\[str, (.+)\]", text):
        return ["map", _type_ref(m.group(1))]
    return text


def _innermost(text: str) -> str:
    while m := re.fullmatch(r"(?:List\[(.+)\]|Dict\[str, (.+)\])", text):
        text = m.group(1) or m.group(2)
    return text


def main(wheel: str) -> None:
    models: dict[str, dict[str, object]] = {}
    scalars: dict[str, dict[str, str]] = {}
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if name.startswith("kubernetes/client/models/") and name.endswith(".py"):
                parsed = _class_dicts(z.read(name).decode())
                if parsed is not None:
                    cls, types, attrs = parsed
                    models[cls] = {attrs[k]: _type_ref(v) for k, v in types.items()}
                    scalars[cls] = {attrs[k]: _innermost(v) for k, v in types.items()
                                    if _innermost(v) in SCALARS}
    wanted: dict[str, dict[str, object]] = {}
    todo = list(ROOTS.values())
    while todo:
        cls = todo.pop()
        if cls in wanted:
            continue
        wanted[cls] = models[cls]
        for ref in models[cls].values():
            while isinstance(ref, list):
                ref = ref[1]
            if ref != "scalar":
                todo.append(str(ref))
    wanted_scalars = {cls: scalars[cls] for cls in sorted(wanted) if scalars[cls]}
    OUT.write_text(json.dumps({"roots": ROOTS, "types": dict(sorted(wanted.items())), "scalars": wanted_scalars},
                              indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(wanted)} types to {OUT}")


if __name__ == "__main__":
    main(sys.argv[1])

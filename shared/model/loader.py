"""Reading Kubernetes objects from YAML (multi-document) or JSON (single objects or `kind: List`),
with the defaults the API server and its admission plugins apply, and errors that name the object,
the field and the reason."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import msgspec
import yaml

from shared.errors import InvalidInput

from . import pod_resources, validation
from .api_fields import FieldValidation, unknown_fields
from .config import DEFAULT_SCHEDULER_NAME, KubeSchedulerConfiguration
from .meta import ObjectMeta
from .namespace import Namespace, labelled
from .node import Node
from .pod import Pod
from .policy import PodDisruptionBudget, PriorityClass
from .unmodelled import unmodelled
from .validation import NameValidation

DEFAULT_NAMESPACE = "default"
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
PREEMPT_NEVER = "Never"
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
LABEL_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


@dataclass
class ClusterInput:
    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    priority_classes: list[PriorityClass] = field(default_factory=list)
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)
    namespaces: list[Namespace] = field(default_factory=list)
    """Labelled with their own names, as the API server stores them."""
    config: KubeSchedulerConfiguration | None = None
    warnings: list[str] = field(default_factory=list)
    """What was accepted with a warning (unknown fields under Warn field validation)."""


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]  # libyaml's where PyYAML has it
    """Safe YAML without implicit timestamps: Kubernetes keeps times as RFC 3339 strings."""


    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        # A key given twice is an error, as for the API server's strict decoding (PyYAML keeps the last).
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, str | int | float | bool) and key in seen:
                mark = key_node.start_mark
                raise yaml.constructor.ConstructorError(
                    None, None, f'duplicate field "{key}" at line {mark.line + 1}, column {mark.column + 1}')
            seen.add(key)
        return super().construct_mapping(node, deep)


_Loader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def decode_text(data: bytes, source: str = "<input>") -> str:
    """The bytes of a file or request body as text: UTF-8 (a BOM allowed), else a clear error."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidInput(source, "", f"not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start} "
                                       "cannot be decoded") from None


def _json_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f'duplicate field "{key}"')
        out[key] = value
    return out


def parse_documents(text: str, source: str = "<input>") -> list[dict[str, Any]]:
    """Every object in a YAML stream or JSON document (or JSON documents separated by `---`, which
    is YAML), `kind: List` flattened. A field given twice in one object is an error."""
    stripped = text.lstrip()
    try:
        try:
            if not stripped.startswith(("{", "[")):
                raise json.JSONDecodeError("not JSON", text, 0)
            loaded: Any = json.loads(text, object_pairs_hook=_json_pairs)
            docs = loaded if isinstance(loaded, list) else [loaded]
        except json.JSONDecodeError:
            docs = list(yaml.load_all(text, Loader=_Loader))
    except (yaml.YAMLError, ValueError) as exc:
        raise InvalidInput(source, "", f"not valid YAML or JSON: {_one_line(str(exc))}") from None
    out: list[dict[str, Any]] = []
    for i, doc in enumerate(docs):
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise InvalidInput(source, f"document {i}", "expected a Kubernetes object (a mapping)")
        if str(doc.get("kind", "")).endswith("List") and isinstance(doc.get("items"), list):
            for j, item in enumerate(doc["items"]):
                if not isinstance(item, dict):
                    raise InvalidInput(source, f"document {i}: items[{j}]", "expected a Kubernetes object")
                out.append(item)
        else:
            out.append(doc)
    return out


def _one_line(text: str) -> str:
    return " ".join(text.split())


_AT = re.compile(r"^(?P<reason>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.S)


_EXPECTED = re.compile(r"^Expected `(?P<want>[^`]+)`, got `(?P<got>[^`]+)`$")
_TYPE_NAMES = {"int": "an integer", "str": "a string", "bool": "a boolean", "float": "a number",
               "object": "an object", "array": "a list", "null": "null", "int | float": "a number",
               "float | int": "a number"}


def _type_reason(reason: str) -> str:
    """msgspec's "Expected `int | null`, got `str`" as people read it: "must be an integer, got a string"."""
    m = _EXPECTED.match(reason)
    if m is None:
        return reason
    want = " or ".join(_TYPE_NAMES.get(t.strip(), t.strip()) for t in m["want"].split("|") if t.strip() != "null")
    return f"must be {want or 'null'}, got {_TYPE_NAMES.get(m['got'], m['got'])}"


def _convert(kind: type[Any], doc: dict[str, Any], what: str) -> Any:
    try:
        return msgspec.convert(doc, kind)
    except msgspec.ValidationError as exc:
        m = _AT.match(str(exc))
        path = (m["path"] or "").lstrip(".") if m else ""
        reason = m["reason"] if m else str(exc)
        raise InvalidInput(what, path, _type_reason(reason)) from None


def describe(doc: dict[str, Any]) -> str:
    kind = doc.get("kind") or "object"
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    name = meta.get("name", "<unnamed>") if meta else "<unnamed>"
    ns = meta.get("namespace") if meta else None
    return f"{kind} {ns}/{name}" if ns else f"{kind} {name}"


API_GROUPS = {"Node": "", "Pod": "", "Namespace": "", "PriorityClass": "scheduling.k8s.io",
              "PodDisruptionBudget": "policy", "KubeSchedulerConfiguration": "kubescheduler.config.k8s.io"}
"""Each kind's API group ("": the core group, whose only version is v1). Any version of the
group is taken: upstream's own inputs name earlier ones (policy/v1beta1)."""


def _check_api_version(kind: str, doc: dict[str, Any], what: str) -> None:
    """An apiVersion, where one is given, must be the kind's group (as the API server finds no
    kind "Pod" in "v2" or "apps/v1")."""
    given = doc.get("apiVersion")
    group = API_GROUPS.get(kind)
    if given is None or group is None:
        return
    if not isinstance(given, str):
        raise InvalidInput(what, "apiVersion", f"must be a string, got {given!r}")
    group_of, _, version = given.rpartition("/")
    if group_of != group or not version or (not group and version != "v1"):
        raise InvalidInput(what, "apiVersion", f'no matches for kind "{kind}" in version "{given}"')


def load_objects(docs: Iterable[tuple[str, dict[str, Any]]], *,
                 field_validation: FieldValidation = "Strict", names: NameValidation = "Warn") -> ClusterInput:
    """The objects of `docs`, validated as the API server would; fields the Kubernetes API does not
    declare are refused (Strict), reported in `warnings` (Warn) or dropped (Ignore). `names`: the
    syntax of names, namespaces, labels and container names refused (Strict: the gateway, as a
    cluster's API refuses them) or reported in `warnings` (Warn, the default: upstream's scheduler
    tests, which `simulate` reproduces, name nodes "nodeA")."""
    result = ClusterInput()
    checks = validation.Checks(names, result.warnings)
    raw_pods: list[tuple[str, Pod]] = []
    for source, doc in docs:
        kind = doc.get("kind")
        what = describe(doc)
        if isinstance(kind, str):
            _check_api_version(kind, doc, what)
        if field_validation != "Ignore" and isinstance(kind, str):
            _check_fields(kind, doc, what, field_validation, result.warnings)
        if kind == "Node":
            result.nodes.append(_validate_node(_convert(Node, doc, what), what, checks))
        elif kind == "Pod":
            raw_pods.append((what, _convert(Pod, doc, what)))
            result.warnings.extend(f"{what}: {w}" for w in unmodelled(doc))
        elif kind == "PriorityClass":
            pc = _convert(PriorityClass, doc, what)
            checks.meta(what, pc.metadata, namespaced=False)
            result.priority_classes.append(pc)
        elif kind == "PodDisruptionBudget":
            pdb = _convert(PodDisruptionBudget, doc, what)
            checks.meta(what, pdb.metadata, namespaced=True)
            meta = msgspec.structs.replace(pdb.metadata, namespace=pdb.metadata.namespace or DEFAULT_NAMESPACE)
            result.pdbs.append(msgspec.structs.replace(pdb, metadata=meta))
        elif kind == "KubeSchedulerConfiguration":
            if result.config is not None:
                raise InvalidInput(f"{source}: KubeSchedulerConfiguration", "", "given more than once")
            result.config = _validate_config(_convert(KubeSchedulerConfiguration, doc, "KubeSchedulerConfiguration"))
        elif kind == "Namespace":
            ns = _convert(Namespace, doc, what)
            checks.meta(what, ns.metadata, namespaced=False, name_rule="label")
            result.namespaces.append(labelled(ns))
        elif not kind:
            raise InvalidInput(f"{source}: {what}", "kind", "required")
        else:
            raise InvalidInput(f"{source}: {what}", "kind",
                               f"unsupported kind {kind!r} (Node, Pod, PriorityClass, PodDisruptionBudget, "
                               "Namespace or KubeSchedulerConfiguration)")
    _check_unique((n.metadata.name for n in result.nodes), "Node")
    _check_unique((ns.metadata.name for ns in result.namespaces), "Namespace")
    classes = {pc.metadata.name: pc for pc in result.priority_classes}
    _check_unique((pc.metadata.name for pc in result.priority_classes), "PriorityClass")
    globals_ = [pc for pc in result.priority_classes if pc.global_default]
    if len(globals_) > 1:
        raise InvalidInput(f"PriorityClass {globals_[1].metadata.name}", "globalDefault",
                           "only one PriorityClass can be marked as globalDefault")
    default_class = globals_[0] if globals_ else None
    for what, pod in raw_pods:
        result.pods.append(default_pod(pod, what, classes, default_class, checks))
    _check_unique((p.key for p in result.pods), "Pod")
    return result


def _check_fields(kind: str, doc: dict[str, Any], what: str, mode: FieldValidation, warnings: list[str]) -> None:
    unknown = [f'unknown field "{path}"' for path in unknown_fields(kind, doc)]
    if unknown and mode == "Strict":
        raise InvalidInput(what, "", "strict decoding error: " + ", ".join(unknown))
    warnings.extend(f"{what}: {u}" for u in unknown)


def _validate_config(config: KubeSchedulerConfiguration) -> KubeSchedulerConfiguration:
    """The ranges kube-scheduler's configuration validation checks for the fields Berth reads."""
    what = "KubeSchedulerConfiguration"
    places = [("percentageOfNodesToScore", config.percentage_of_nodes_to_score)]
    places += [(f"profiles[{i}].percentageOfNodesToScore", p.percentage_of_nodes_to_score)
               for i, p in enumerate(config.profiles)]
    for path, value in places:
        if value is not None and not 0 <= value <= 100:
            raise InvalidInput(what, path, f"Invalid value: {value}: not in valid range [0-100]")
    return config


def _check_unique(names: Iterable[str], kind: str) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise InvalidInput(f"{kind} {name}", "metadata.name",
                               "duplicate: an object of this kind and name was already given")
        seen.add(name)


def _validate_node(node: Node, what: str, checks: validation.Checks) -> Node:
    """Every invalid field at once, as for pods: metadata, each resource list, each taint."""
    validation.require_name(what, node.metadata)
    errors = validation.FieldErrors()
    with errors.section():
        checks.meta(what, node.metadata, namespaced=False)
    for section, values in (("status.allocatable", node.status.allocatable), ("status.capacity", node.status.capacity)):
        with errors.section():
            validation.check_resource_list(what, section, values)
    for i, t in enumerate(node.spec.taints):
        with errors.section():
            if not t.key:
                raise InvalidInput(what, f"spec.taints[{i}].key", "required")
            if t.effect not in TAINT_EFFECTS:
                raise InvalidInput(what, f"spec.taints[{i}].effect",
                                   f"unsupported value {t.effect!r}: {', '.join(TAINT_EFFECTS)}")
    errors.raise_found()
    return node


def default_pod(
    pod: Pod, what: str, classes: dict[str, PriorityClass], default_class: PriorityClass | None,
    checks: validation.Checks | None = None,
) -> Pod:
    """Validate and apply the API server's defaults plus the Priority admission plugin."""
    meta: ObjectMeta = pod.metadata
    validation.require_name(what, meta)
    namespace = meta.namespace or DEFAULT_NAMESPACE
    what = f"Pod {namespace}/{meta.name}"
    checks = checks or validation.Checks()
    spec = pod.spec
    # The Priority admission plugin runs before validation: its refusal comes alone.
    priority = spec.priority
    policy = spec.preemption_policy
    if spec.priority_class_name:
        pc = classes.get(spec.priority_class_name)
        if pc is None:
            raise InvalidInput(what, "spec.priorityClassName",
                               f"no PriorityClass with name {spec.priority_class_name} was found")
        if priority is not None and priority != pc.value:
            raise InvalidInput(what, "spec.priority",
                               f"the integer value of priority ({priority}) must not be provided in pod spec; "
                               f"priority admission controller computed {pc.value} from the given PriorityClass name")
        priority = pc.value
        policy = policy or pc.preemption_policy
    elif priority is None and default_class is not None:
        priority = default_class.value
        policy = policy or default_class.preemption_policy
    errors = validation.FieldErrors()
    with errors.section():
        checks.meta(what, meta, namespaced=True)
    with errors.section():
        if not spec.containers:
            raise InvalidInput(what, "spec.containers", "required: a pod needs at least one container")
        checks.container_names(what, spec.containers, spec.init_containers)
    for group, containers in (("containers", spec.containers), ("initContainers", spec.init_containers)):
        for i, c in enumerate(containers):
            with errors.section():
                base = f"spec.{group}[{i}].resources"
                validation.check_resource_list(what, f"{base}.requests", c.resources.requests)
                validation.check_resource_list(what, f"{base}.limits", c.resources.limits)
                validation.check_requests_within_limits(what, base, c.resources.requests, c.resources.limits)
                for j, port in enumerate(c.ports):
                    if port.protocol not in ("TCP", "UDP", "SCTP"):
                        raise InvalidInput(what, f"spec.{group}[{i}].ports[{j}].protocol",
                                           f"unsupported value {port.protocol!r}: TCP, UDP, SCTP")
    with errors.section():
        validation.check_resource_list(what, "spec.overhead", spec.overhead)
        if spec.resources is not None:
            validation.check_resource_list(what, "spec.resources.requests", spec.resources.requests)
            validation.check_resource_list(what, "spec.resources.limits", spec.resources.limits)
            pod = pod_resources.check_and_default(what, pod)
            spec = pod.spec
    with errors.section():
        _validate_scheduling_fields(pod, what)
    errors.raise_found()
    spec = msgspec.structs.replace(
        spec,
        priority=priority if priority is not None else 0,
        preemption_policy=policy or PREEMPT_LOWER_PRIORITY,
        scheduler_name=spec.scheduler_name or DEFAULT_SCHEDULER_NAME,
        containers=[_default_container(c, spec.host_network) for c in spec.containers],
        init_containers=[_default_container(c, spec.host_network) for c in spec.init_containers],
    )
    meta = msgspec.structs.replace(meta, namespace=namespace, uid=meta.uid or f"{namespace}/{meta.name}")
    return msgspec.structs.replace(pod, metadata=meta, spec=spec)


def _default_container(c: Any, host_network: bool) -> Any:
    """hostNetwork pods publish every container port on the host (hostPort defaults to containerPort)."""
    if not host_network or not c.ports:
        return c
    ports = [msgspec.structs.replace(p, host_port=p.host_port or p.container_port) for p in c.ports]
    return msgspec.structs.replace(c, ports=ports)


def _validate_scheduling_fields(pod: Pod, what: str) -> None:
    spec = pod.spec
    for i, t in enumerate(spec.tolerations):
        if t.operator not in ("", "Equal", "Exists"):
            raise InvalidInput(what, f"spec.tolerations[{i}].operator",
                               f"unsupported value {t.operator!r}: Equal, Exists")
        if t.operator == "Exists" and t.value:
            raise InvalidInput(what, f"spec.tolerations[{i}].value", "must be empty when `operator` is 'Exists'")
        if t.effect and t.effect not in TAINT_EFFECTS:
            raise InvalidInput(what, f"spec.tolerations[{i}].effect", f"unsupported value {t.effect!r}")
    aff = spec.affinity
    if aff and aff.node_affinity and aff.node_affinity.required_during_scheduling_ignored_during_execution:
        terms = aff.node_affinity.required_during_scheduling_ignored_during_execution.node_selector_terms
        for i, term in enumerate(terms):
            for j, req in enumerate(term.match_expressions):
                if req.operator not in NODE_SELECTOR_OPERATORS:
                    raise InvalidInput(
                        what,
                        f"spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
                        f"nodeSelectorTerms[{i}].matchExpressions[{j}].operator",
                        f"not a valid selector operator: {req.operator!r}",
                    )
    for kind, pa in (("podAffinity", aff.pod_affinity if aff else None),
                     ("podAntiAffinity", aff.pod_anti_affinity if aff else None)):
        if pa is None:
            continue
        for i, pa_term in enumerate(pa.required_during_scheduling_ignored_during_execution):
            if not pa_term.topology_key:
                raise InvalidInput(what, f"spec.affinity.{kind}.requiredDuringSchedulingIgnoredDuringExecution[{i}]"
                                   ".topologyKey", "can not be empty")
        for i, w in enumerate(pa.preferred_during_scheduling_ignored_during_execution):
            if not w.pod_affinity_term.topology_key:
                raise InvalidInput(what, f"spec.affinity.{kind}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
                                   ".podAffinityTerm.topologyKey", "can not be empty")
            if not 1 <= w.weight <= 100:
                raise InvalidInput(what, f"spec.affinity.{kind}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
                                   ".weight", "must be in the range 1-100")
    for i, c in enumerate(spec.topology_spread_constraints):
        base = f"spec.topologySpreadConstraints[{i}]"
        if c.max_skew <= 0:
            raise InvalidInput(what, f"{base}.maxSkew", "must be greater than zero")
        if not c.topology_key:
            raise InvalidInput(what, f"{base}.topologyKey", "can not be empty")
        if c.when_unsatisfiable not in ("DoNotSchedule", "ScheduleAnyway"):
            raise InvalidInput(what, f"{base}.whenUnsatisfiable",
                               f"unsupported value {c.when_unsatisfiable!r}: DoNotSchedule, ScheduleAnyway")
        if c.min_domains is not None and (c.min_domains <= 0 or c.when_unsatisfiable != "DoNotSchedule"):
            raise InvalidInput(what, f"{base}.minDomains",
                               "must be greater than 0 and only allowed with whenUnsatisfiable=DoNotSchedule")

"""Bad inputs, each with the one-line error the API server's rules give it: the same table drives
`berth simulate` (exit 2, `error: <message>`) and the gateway (HTTP 422, the Status's message).

`{source}` in a message is the file's path, or "request body" at the gateway. `gateway_only`: an
identity rule (names, namespaces, labels, container names) that simulate only
warns about, since upstream's scheduler tests, which it reproduces, name nodes "nodeA".
"""

from __future__ import annotations

from dataclasses import dataclass

SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
             "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
             r"validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
DNS_LABEL = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
             "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
             "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
LABEL_VALUE = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
               "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  "
               "or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
NAME_PART = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
             "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
             "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


@dataclass(frozen=True)
class Bad:
    id: str
    text: str
    message: str
    gateway_only: bool = False
    gateway_message: str = ""
    """What the gateway says instead, when it differs (it serves fewer kinds)."""

    def data(self) -> bytes:
        """The input's bytes (a lone surrogate stands for a byte that is not UTF-8)."""
        return self.text.encode("utf-8", "surrogateescape")

    def expected(self, source: str, *, gateway: bool = False) -> str:
        return (self.gateway_message if gateway and self.gateway_message else self.message).replace("{source}", source)


def pod(spec: str = "containers: [{name: c}]", meta: str = "name: web") -> str:
    return f"kind: Pod\napiVersion: v1\nmetadata: {{{meta}}}\nspec: {{{spec}}}\n"


def node(status: str = 'allocatable: {cpu: "4", memory: 4Gi, pods: "10"}', meta: str = "name: n1",
         spec: str = "{}") -> str:
    return f"kind: Node\napiVersion: v1\nmetadata: {{{meta}}}\nspec: {spec}\nstatus: {{{status}}}\n"


def res(requests: str = "", limits: str = "") -> str:
    parts = [f"requests: {{{requests}}}" if requests else "", f"limits: {{{limits}}}" if limits else ""]
    return "containers: [{name: c, resources: {" + ", ".join(p for p in parts if p) + "}}]"


BIG = "x" * (300 * 1024)
GATEWAY_NO_CONFIG = ("{source}: document 0: kind: unsupported kind 'KubeSchedulerConfiguration': expected one of "
                     "Namespace, Node, Pod, PriorityClass, PodDisruptionBudget")

BAD: tuple[Bad, ...] = (
    # Unknown fields (kubectl's default strict field validation).
    Bad("typo-nodeSelector", pod("nodeSelectr: {zone: a}, containers: [{name: c}]"),
        'Pod web: strict decoding error: unknown field "spec.nodeSelectr"'),
    Bad("typo-requests", pod("containers: [{name: c, resources: {requets: {cpu: '1'}}}]"),
        'Pod web: strict decoding error: unknown field "spec.containers[0].resources.requets"'),
    Bad("typo-metadata", pod(meta="name: web, labelz: {a: b}"),
        'Pod web: strict decoding error: unknown field "metadata.labelz"'),
    Bad("typo-toleration", pod("tolerations: [{key: k, operater: Exists}], containers: [{name: c}]"),
        'Pod web: strict decoding error: unknown field "spec.tolerations[0].operater"'),
    Bad("typo-affinity", pod("affinity: {nodeAfinity: {}}, containers: [{name: c}]"),
        'Pod web: strict decoding error: unknown field "spec.affinity.nodeAfinity"'),
    Bad("typo-spread", pod("topologySpreadConstraints: [{maxSkew: 1, topologyKey: z, whenUnsatisfiable: "
                           "DoNotSchedule, labelSelectr: {}}], containers: [{name: c}]"),
        'Pod web: strict decoding error: unknown field "spec.topologySpreadConstraints[0].labelSelectr"'),
    Bad("typo-two-fields", pod("nodeSelectr: {}, priorityy: 1, containers: [{name: c}]"),
        'Pod web: strict decoding error: unknown field "spec.nodeSelectr", unknown field "spec.priorityy"'),
    Bad("typo-node-status", node('allocatable: {cpu: "4"}, capacityy: {}'),
        'Node n1: strict decoding error: unknown field "status.capacityy"'),
    Bad("typo-node-taint", node(spec="{taints: [{key: k, effect: NoSchedule, valu: v}]}"),
        'Node n1: strict decoding error: unknown field "spec.taints[0].valu"'),
    Bad("typo-top-level", pod() + "sepc: {}\n", 'Pod web: strict decoding error: unknown field "sepc"'),
    Bad("typo-priorityclass", "kind: PriorityClass\napiVersion: scheduling.k8s.io/v1\nmetadata: {name: high}\n"
                              "value: 10\nglobalDefaul: true\n",
        'PriorityClass high: strict decoding error: unknown field "globalDefaul"'),
    Bad("typo-pdb", "kind: PodDisruptionBudget\napiVersion: policy/v1\nmetadata: {name: b}\n"
                    "spec: {minAvailabel: 1}\n",
        'PodDisruptionBudget b: strict decoding error: unknown field "spec.minAvailabel"'),
    # Quantities.
    Bad("negative-pod-cpu", pod(res(requests="cpu: '-2'")),
        'Pod default/web: spec.containers[0].resources.requests[cpu]: Invalid value: "-2": '
        "must be greater than or equal to 0"),
    Bad("negative-pod-memory-limit", pod(res(limits="memory: -1Gi")),
        'Pod default/web: spec.containers[0].resources.limits[memory]: Invalid value: "-1Gi": '
        "must be greater than or equal to 0"),
    Bad("negative-node-cpu", node('allocatable: {cpu: "-4"}'),
        'Node n1: status.allocatable[cpu]: Invalid value: "-4": must be greater than or equal to 0'),
    Bad("negative-node-pods", node('allocatable: {pods: "-1"}'),
        'Node n1: status.allocatable[pods]: Invalid value: "-1": must be greater than or equal to 0'),
    Bad("negative-node-capacity", node('capacity: {memory: "-1"}'),
        'Node n1: status.capacity[memory]: Invalid value: "-1": must be greater than or equal to 0'),
    Bad("negative-overhead", pod("overhead: {cpu: '-1'}, containers: [{name: c}]"),
        'Pod default/web: spec.overhead[cpu]: Invalid value: "-1": must be greater than or equal to 0'),
    Bad("requests-above-limits", pod(res(requests="cpu: '2'", limits="cpu: '1'")),
        'Pod default/web: spec.containers[0].resources.requests: Invalid value: "2": '
        "must be less than or equal to cpu limit of 1"),
    Bad("memory-requests-above-limits", pod(res(requests="memory: 2Gi", limits="memory: 1Gi")),
        'Pod default/web: spec.containers[0].resources.requests: Invalid value: "2Gi": '
        "must be less than or equal to memory limit of 1Gi"),
    Bad("init-requests-above-limits", pod("initContainers: [{name: i, resources: {requests: {cpu: '3'}, "
                                          "limits: {cpu: '1'}}}], containers: [{name: c}]"),
        'Pod default/web: spec.initContainers[0].resources.requests: Invalid value: "3": '
        "must be less than or equal to cpu limit of 1"),
    Bad("quantity-garbage", pod(res(requests="cpu: lots")),
        "Pod default/web: spec.containers[0].resources.requests[cpu]: quantities must match the regular "
        "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$', got 'lots'"),
    # Names, namespaces, labels, annotations.
    Bad("pod-name", pod(meta="name: Bad_Name!!"),
        f'Pod default/Bad_Name!!: metadata.name: Invalid value: "Bad_Name!!": {SUBDOMAIN}', gateway_only=True),
    Bad("pod-name-upper", pod(meta="name: Web"),
        f'Pod default/Web: metadata.name: Invalid value: "Web": {SUBDOMAIN}', gateway_only=True),
    Bad("pod-name-too-long", pod(meta=f"name: {'a' * 254}"),
        f'Pod default/{"a" * 254}: metadata.name: Invalid value: "{"a" * 254}": must be no more than 253 characters',
        gateway_only=True),
    Bad("namespace-upper", pod(meta="name: web, namespace: UPPER"),
        f'Pod UPPER/web: metadata.namespace: Invalid value: "UPPER": {DNS_LABEL}', gateway_only=True),
    Bad("namespace-dots", pod(meta="name: web, namespace: a.b"),
        f'Pod a.b/web: metadata.namespace: Invalid value: "a.b": {DNS_LABEL}', gateway_only=True),
    Bad("node-name", node(meta="name: nodeA"), f'Node nodeA: metadata.name: Invalid value: "nodeA": {SUBDOMAIN}',
        gateway_only=True),
    Bad("label-value-space", pod(meta="name: web, labels: {app: 'my app'}"),
        f'Pod default/web: metadata.labels[app]: Invalid value: "my app": {LABEL_VALUE}', gateway_only=True),
    Bad("label-value-long", pod(meta=f"name: web, labels: {{app: {'v' * 64}}}"),
        f'Pod default/web: metadata.labels[app]: Invalid value: "{"v" * 64}": must be no more than 63 characters',
        gateway_only=True),
    Bad("label-key", pod(meta="name: web, labels: {'-app': x}"),
        f'Pod default/web: metadata.labels: Invalid value: "-app": {NAME_PART}', gateway_only=True),
    Bad("label-key-prefix", pod(meta="name: web, labels: {'Example.com/app': x}"),
        f'Pod default/web: metadata.labels: Invalid value: "Example.com": {SUBDOMAIN}', gateway_only=True),
    Bad("label-key-empty-prefix", pod(meta="name: web, labels: {'/app': x}"),
        'Pod default/web: metadata.labels: Invalid value: "/app": prefix part must be non-empty', gateway_only=True),
    Bad("node-label", node(meta="name: n1, labels: {zone: 'a b'}"),
        f'Node n1: metadata.labels[zone]: Invalid value: "a b": {LABEL_VALUE}', gateway_only=True),
    Bad("annotation-too-big", pod(meta=f"name: web, annotations: {{big: {BIG}}}"),
        "Pod default/web: metadata.annotations: Too long: must have at most 262144 bytes"),
    Bad("priorityclass-name", "kind: PriorityClass\napiVersion: scheduling.k8s.io/v1\nmetadata: {name: High}\n"
                              "value: 10\n",
        f'PriorityClass High: metadata.name: Invalid value: "High": {SUBDOMAIN}', gateway_only=True),
    # Containers.
    Bad("duplicate-container", pod("containers: [{name: c}, {name: c}]"),
        'Pod default/web: spec.containers[1].name: Duplicate value: "c"', gateway_only=True),
    Bad("init-container-clash", pod("initContainers: [{name: c}], containers: [{name: c}]"),
        'Pod default/web: spec.initContainers[0].name: Duplicate value: "c"', gateway_only=True),
    Bad("container-name-missing", pod("containers: [{image: nginx}]"),
        "Pod default/web: spec.containers[0].name: Required value", gateway_only=True),
    Bad("container-name-syntax", pod("containers: [{name: Web_1}]"),
        f'Pod default/web: spec.containers[0].name: Invalid value: "Web_1": {DNS_LABEL}', gateway_only=True),
    Bad("no-containers", pod("containers: []"),
        "Pod default/web: spec.containers: required: a pod needs at least one container"),
    Bad("port-protocol", pod("containers: [{name: c, ports: [{containerPort: 80, protocol: XTP}]}]"),
        "Pod default/web: spec.containers[0].ports[0].protocol: unsupported value 'XTP': TCP, UDP, SCTP"),
    # Tolerations, affinity, spread.
    Bad("toleration-operator", pod("tolerations: [{key: k, operator: Maybe}], containers: [{name: c}]"),
        "Pod default/web: spec.tolerations[0].operator: unsupported value 'Maybe': Equal, Exists"),
    Bad("toleration-exists-value", pod("tolerations: [{key: k, operator: Exists, value: v}], containers: [{name: c}]"),
        "Pod default/web: spec.tolerations[0].value: must be empty when `operator` is 'Exists'"),
    Bad("spread-skew", pod("topologySpreadConstraints: [{maxSkew: 0, topologyKey: z, whenUnsatisfiable: "
                           "DoNotSchedule}], containers: [{name: c}]"),
        "Pod default/web: spec.topologySpreadConstraints[0].maxSkew: must be greater than zero"),
    Bad("spread-key", pod("topologySpreadConstraints: [{maxSkew: 1, topologyKey: '', whenUnsatisfiable: "
                          "DoNotSchedule}], containers: [{name: c}]"),
        "Pod default/web: spec.topologySpreadConstraints[0].topologyKey: can not be empty"),
    # Types and kinds.
    Bad("priority-string", pod("priority: high, containers: [{name: c}]"),
        "Pod web: spec.priority: must be an integer, got a string"),
    Bad("containers-not-a-list", pod("containers: {name: c}"),
        "Pod web: spec.containers: must be a list, got an object"),
    Bad("no-kind", "apiVersion: v1\nmetadata: {name: web}\n", "{source}: object web: kind: required"),
    Bad("node-taint-effect", node(spec="{taints: [{key: k, effect: Sometimes}]}"),
        "Node n1: spec.taints[0].effect: unsupported value 'Sometimes': NoSchedule, PreferNoSchedule, NoExecute"),
    # Documents.
    Bad("duplicate-yaml-key", "kind: Pod\nmetadata: {name: a, name: b}\nspec: {containers: [{name: c}]}\n",
        '{source}: not valid YAML or JSON: duplicate field "name" at line 2, column 21'),
    Bad("duplicate-json-key", '{"kind": "Pod", "metadata": {"name": "a", "name": "b"}}',
        '{source}: not valid YAML or JSON: duplicate field "name"'),
    Bad("not-a-mapping", "- just\n- a list\n", "{source}: document 0: expected a Kubernetes object (a mapping)"),
    Bad("not-utf8", "kind: Pod\nmetadata: {name: caf\udce9}\n",
        "{source}: not UTF-8 text: byte 0xe9 at offset 30 cannot be decoded"),
    # More scheduling fields.
    Bad("node-affinity-operator",
        pod("affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
            "[{matchExpressions: [{key: z, operator: Near, values: [a]}]}]}}}, containers: [{name: c}]"),
        "Pod default/web: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
        "nodeSelectorTerms[0].matchExpressions[0].operator: not a valid selector operator: 'Near'"),
    Bad("pod-affinity-topology-key",
        pod("affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
            "[{labelSelector: {}, topologyKey: ''}]}}, containers: [{name: c}]"),
        "Pod default/web: spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: "
        "can not be empty"),
    Bad("anti-affinity-weight", pod("affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
                                    "[{weight: 101, podAffinityTerm: {topologyKey: z}}]}}, containers: [{name: c}]"),
        "Pod default/web: spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
        "must be in the range 1-100"),
    Bad("spread-when", pod("topologySpreadConstraints: [{maxSkew: 1, topologyKey: z, whenUnsatisfiable: Sometimes}], "
                           "containers: [{name: c}]"),
        "Pod default/web: spec.topologySpreadConstraints[0].whenUnsatisfiable: unsupported value 'Sometimes': "
        "DoNotSchedule, ScheduleAnyway"),
    Bad("spread-min-domains", pod("topologySpreadConstraints: [{maxSkew: 1, topologyKey: z, whenUnsatisfiable: "
                                  "ScheduleAnyway, minDomains: 2}], containers: [{name: c}]"),
        "Pod default/web: spec.topologySpreadConstraints[0].minDomains: must be greater than 0 and only allowed "
        "with whenUnsatisfiable=DoNotSchedule"),
    Bad("toleration-effect", pod("tolerations: [{key: k, operator: Equal, value: v, effect: Sometimes}], "
                                 "containers: [{name: c}]"),
        "Pod default/web: spec.tolerations[0].effect: unsupported value 'Sometimes'"),
    Bad("node-taint-key", node(spec="{taints: [{key: '', effect: NoSchedule}]}"),
        "Node n1: spec.taints[0].key: required"),
    Bad("priority-class-missing", pod("priorityClassName: gold, containers: [{name: c}]"),
        "Pod default/web: spec.priorityClassName: no PriorityClass with name gold was found"),
    Bad("node-pods-garbage", node('allocatable: {pods: "ten"}'),
        "Node n1: status.allocatable[pods]: quantities must match the regular expression "
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$', got 'ten'"),
    Bad("limits-negative-ephemeral", pod("containers: [{name: c, resources: {limits: {ephemeral-storage: '-5Mi'}}}]"),
        'Pod default/web: spec.containers[0].resources.limits[ephemeral-storage]: Invalid value: "-5Mi": '
        "must be greater than or equal to 0"),
    Bad("nodename-type", pod("nodeName: 7, containers: [{name: c}]"),
        "Pod web: spec.nodeName: must be a string, got an integer"),
    # More names.
    Bad("pdb-name", "kind: PodDisruptionBudget\napiVersion: policy/v1\nmetadata: {name: B_1}\n"
                    "spec: {minAvailable: 1}\n",
        f'PodDisruptionBudget B_1: metadata.name: Invalid value: "B_1": {SUBDOMAIN}', gateway_only=True),
    Bad("namespace-too-long", pod(meta=f"name: web, namespace: {'n' * 64}"),
        f'Pod {"n" * 64}/web: metadata.namespace: Invalid value: "{"n" * 64}": must be no more than 63 characters',
        gateway_only=True),
    Bad("annotation-key", pod(meta="name: web, annotations: {'bad key': v}"),
        f'Pod default/web: metadata.annotations: Invalid value: "bad key": {NAME_PART}', gateway_only=True),
    Bad("label-key-long", pod(meta=f"name: web, labels: {{{'k' * 64}: v}}"),
        f'Pod default/web: metadata.labels: Invalid value: "{"k" * 64}": name part must be no more than 63 characters',
        gateway_only=True),
    # Pod-level resources (spec.resources).
    Bad("pod-level-unsupported", pod("resources: {requests: {ephemeral-storage: 1Gi}}, containers: [{name: c}]"),
        'Pod default/web: spec.resources.requests[ephemeral-storage]: Unsupported value: "ephemeral-storage": '
        'supported values: "cpu", "memory", "hugepages-*"'),
    Bad("pod-level-above-limit", pod("resources: {requests: {cpu: '2'}, limits: {cpu: '1'}}, containers: [{name: c}]"),
        "Pod default/web: spec.resources.requests[cpu]: Invalid value: '2': must be less than or equal to cpu "
        "limit of 1"),
    Bad("pod-level-below-containers", pod("resources: {requests: {cpu: 500m}}, containers: [{name: a, resources: "
                                          "{requests: {cpu: 400m}}}, {name: b, resources: {requests: {cpu: 300m}}}]"),
        "Pod default/web: spec.resources.requests[cpu]: Invalid value: '500m': must be greater than or equal to "
        "aggregate container requests of 700m"),
    Bad("pod-level-negative", pod("resources: {limits: {memory: -1Gi}}, containers: [{name: c}]"),
        'Pod default/web: spec.resources.limits[memory]: Invalid value: "-1Gi": must be greater than or equal to 0'),
    # Namespaces.
    Bad("namespace-name", "kind: Namespace\napiVersion: v1\nmetadata: {name: Team_A}\n",
        f'Namespace Team_A: metadata.name: Invalid value: "Team_A": {DNS_LABEL}', gateway_only=True),
    Bad("namespace-label", "kind: Namespace\napiVersion: v1\nmetadata: {name: team-a, labels: {team: 'a b'}}\n",
        f'Namespace team-a: metadata.labels[team]: Invalid value: "a b": {LABEL_VALUE}', gateway_only=True),
    Bad("namespace-typo", "kind: Namespace\napiVersion: v1\nmetadata: {name: team-a, lables: {team: a}}\n",
        'Namespace team-a: strict decoding error: unknown field "metadata.lables"'),
    # An apiVersion of another group, or a core version that is not v1 (any version of the kind's
    # own group is taken: upstream's inputs name earlier ones).
    Bad("pod-api-version", "kind: Pod\napiVersion: v2\nmetadata: {name: web}\nspec: {containers: [{name: c}]}\n",
        'Pod web: apiVersion: no matches for kind "Pod" in version "v2"'),
    Bad("node-api-group", "kind: Node\napiVersion: apps/v1\nmetadata: {name: n1}\n",
        'Node n1: apiVersion: no matches for kind "Node" in version "apps/v1"'),
    Bad("class-api-group", "kind: PriorityClass\napiVersion: v1\nmetadata: {name: high}\nvalue: 5\n",
        'PriorityClass high: apiVersion: no matches for kind "PriorityClass" in version "v1"'),
    # Kinds and the scheduler's configuration (the gateway serves neither).
    Bad("unsupported-kind", "kind: Service\napiVersion: v1\nmetadata: {name: s}\n",
        "{source}: Service s: kind: unsupported kind 'Service' (Node, Pod, PriorityClass, PodDisruptionBudget, "
        "Namespace or KubeSchedulerConfiguration)",
        gateway_message="{source}: document 0: kind: unsupported kind 'Service': expected one of Namespace, Node, "
                        "Pod, PriorityClass, PodDisruptionBudget"),
    Bad("percentage-config", "kind: KubeSchedulerConfiguration\napiVersion: kubescheduler.config.k8s.io/v1\n"
                             "percentageOfNodesToScore: 250\n",
        "KubeSchedulerConfiguration: percentageOfNodesToScore: Invalid value: 250: not in valid range [0-100]",
        gateway_message=GATEWAY_NO_CONFIG),
    Bad("percentage-profile", "kind: KubeSchedulerConfiguration\napiVersion: kubescheduler.config.k8s.io/v1\n"
                              "profiles: [{schedulerName: default-scheduler, percentageOfNodesToScore: -1}]\n",
        "KubeSchedulerConfiguration: profiles[0].percentageOfNodesToScore: Invalid value: -1: "
        "not in valid range [0-100]",
        gateway_message=GATEWAY_NO_CONFIG),
)

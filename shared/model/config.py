"""kubescheduler.config.k8s.io/v1 KubeSchedulerConfiguration (the parts a scheduler acts on)."""

from __future__ import annotations

from typing import Any

import msgspec

from .base import K8s

DEFAULT_SCHEDULER_NAME = "default-scheduler"


class PluginRef(K8s, frozen=True, kw_only=True):
    name: str
    weight: int | None = None


class PluginSet(K8s, frozen=True, kw_only=True):
    enabled: list[PluginRef] = []
    disabled: list[PluginRef] = []


class Plugins(K8s, frozen=True, kw_only=True):
    pre_enqueue: PluginSet | None = None
    queue_sort: PluginSet | None = None
    pre_filter: PluginSet | None = None
    filter: PluginSet | None = None
    post_filter: PluginSet | None = None
    pre_score: PluginSet | None = None
    score: PluginSet | None = None
    reserve: PluginSet | None = None
    permit: PluginSet | None = None
    pre_bind: PluginSet | None = None
    bind: PluginSet | None = None
    post_bind: PluginSet | None = None
    multi_point: PluginSet | None = None


class PluginConfig(K8s, frozen=True, kw_only=True):
    name: str
    args: dict[str, Any] = {}


class Profile(K8s, frozen=True, kw_only=True):
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    percentage_of_nodes_to_score: int | None = None
    plugins: Plugins | None = None
    plugin_config: list[PluginConfig] = []


class ExtenderManagedResource(K8s, frozen=True, kw_only=True):
    name: str
    ignored_by_scheduler: bool = False


class ExtenderTLSConfig(K8s, frozen=True, kw_only=True):
    insecure: bool = False
    server_name: str = ""
    cert_file: str = ""
    key_file: str = ""
    ca_file: str = msgspec.field(default="", name="caFile")
    cert_data: str = ""
    key_data: str = ""
    ca_data: str = msgspec.field(default="", name="caData")


class Extender(K8s, frozen=True, kw_only=True):
    url_prefix: str
    filter_verb: str = ""
    preempt_verb: str = ""
    prioritize_verb: str = ""
    weight: int = 0
    bind_verb: str = ""
    enable_https: bool = msgspec.field(default=False, name="enableHTTPS")
    tls_config: ExtenderTLSConfig | None = msgspec.field(default=None, name="tlsConfig")
    http_timeout: str | int | float | None = msgspec.field(default=None, name="httpTimeout")
    node_cache_capable: bool = False
    managed_resources: list[ExtenderManagedResource] = []
    ignorable: bool = False


class KubeSchedulerConfiguration(K8s, frozen=True, kw_only=True):
    api_version: str = "kubescheduler.config.k8s.io/v1"
    kind: str = "KubeSchedulerConfiguration"
    parallelism: int = 16
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff_seconds: int = 1
    pod_max_backoff_seconds: int = 10
    profiles: list[Profile] = []
    extenders: list[Extender] = []

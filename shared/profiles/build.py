"""Profiles from KubeSchedulerConfiguration: upstream's v1 defaults, the merge of a profile's
plugin sets onto them, multiPoint expansion, score weights and pluginConfig.

Above both the framework and the plugins: the framework's runtime is handed the plugins a profile
names, built from a registry (upstream's `NewFramework(ctx, registry, profile, ...)`), and never
imports a plugin itself."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from shared.errors import InvalidInput
from shared.framework.interfaces import (
    BindPlugin,
    FilterPlugin,
    PermitPlugin,
    Plugin,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
)
from shared.framework.runtime import Framework
from shared.model import (
    DEFAULT_SCHEDULER_NAME,
    KubeSchedulerConfiguration,
    PluginConfig,
    PluginRef,
    Plugins,
    PluginSet,
    Profile,
)
from shared.plugins import names
from shared.plugins.registry import UnknownPlugin, plugin_class

Registry = Callable[[str], type[Plugin]]
"""Plugin name → its class; raises UnknownPlugin for a name it does not know."""

# pkg/scheduler/apis/config/v1/default_plugins.go: every default plugin goes through multiPoint.
DEFAULT_MULTI_POINT: tuple[tuple[str, int | None], ...] = (
    (names.SCHEDULING_GATES, None),
    (names.PRIORITY_SORT, None),
    (names.NODE_UNSCHEDULABLE, None),
    (names.NODE_NAME, None),
    (names.TAINT_TOLERATION, 3),
    (names.NODE_AFFINITY, 2),
    (names.NODE_PORTS, None),
    (names.NODE_RESOURCES_FIT, 1),
    (names.VOLUME_RESTRICTIONS, None),
    (names.NODE_VOLUME_LIMITS, None),
    (names.VOLUME_BINDING, None),
    (names.VOLUME_ZONE, None),
    (names.POD_TOPOLOGY_SPREAD, 2),
    (names.INTER_POD_AFFINITY, 2),
    (names.DEFAULT_PREEMPTION, None),
    (names.NODE_RESOURCES_BALANCED_ALLOCATION, 1),
    (names.IMAGE_LOCALITY, 1),
    (names.DEFAULT_BINDER, None),
)

# Extension point (config field name) -> the interface a plugin must implement to run there.
POINTS: tuple[tuple[str, type], ...] = (
    ("preEnqueue", PreEnqueuePlugin),
    ("queueSort", QueueSortPlugin),
    ("preFilter", PreFilterPlugin),
    ("filter", FilterPlugin),
    ("postFilter", PostFilterPlugin),
    ("preScore", PreScorePlugin),
    ("score", ScorePlugin),
    ("reserve", ReservePlugin),
    ("permit", PermitPlugin),
    ("preBind", PreBindPlugin),
    ("bind", BindPlugin),
    ("postBind", PostBindPlugin),
)

_FIELD = {
    "preEnqueue": "pre_enqueue", "queueSort": "queue_sort", "preFilter": "pre_filter", "filter": "filter",
    "postFilter": "post_filter", "preScore": "pre_score", "score": "score", "reserve": "reserve",
    "permit": "permit", "preBind": "pre_bind", "bind": "bind", "postBind": "post_bind", "multiPoint": "multi_point",
}


def default_plugins() -> Plugins:
    return Plugins(multi_point=PluginSet(enabled=[PluginRef(name=n, weight=w) for n, w in DEFAULT_MULTI_POINT]))


def _merge_plugin_set(default: PluginSet | None, custom: PluginSet | None) -> PluginSet:
    """v1 defaults' mergePluginSet: custom disables remove defaults ("*" all), a custom entry
    naming a default replaces it in place, other custom entries are appended."""
    default = default or PluginSet()
    custom = custom or PluginSet()
    disabled = [PluginRef(name=p.name) for p in [*custom.disabled, *default.disabled]]
    disabled_names = {p.name for p in disabled}
    custom_index = {p.name: i for i, p in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[PluginRef] = []
    if "*" not in disabled_names:
        for p in default.enabled:
            if p.name in disabled_names:
                continue
            if p.name in custom_index:
                replaced.add(custom_index[p.name])
                p = custom.enabled[custom_index[p.name]]
            enabled.append(p)
    enabled.extend(p for i, p in enumerate(custom.enabled) if i not in replaced)
    return PluginSet(enabled=enabled, disabled=disabled)


def merged_plugins(custom: Plugins | None) -> dict[str, PluginSet]:
    defaults = default_plugins()
    out: dict[str, PluginSet] = {}
    for point in [*(p for p, _ in POINTS), "multiPoint"]:
        field = _FIELD[point]
        out[point] = _merge_plugin_set(getattr(defaults, field), getattr(custom, field) if custom else None)
    return out


def _plugin_args(profile: Profile) -> dict[str, dict[str, Any]]:
    args: dict[str, dict[str, Any]] = {}
    for pc in profile.plugin_config:
        if pc.name in args:
            raise InvalidInput(f"profile {profile.scheduler_name}", "pluginConfig",
                               f"repeated config for plugin {pc.name}")
        args[pc.name] = dict(pc.args)
    return args


def _expand(point: str, iface: type, sets: Mapping[str, PluginSet], instances: Mapping[str, Plugin]) -> list[Plugin]:
    """The plugins at one extension point, ordered as upstream's expandMultiPointPlugins."""
    point_set = sets[point]
    enabled = [p.name for p in point_set.enabled]
    disabled = {p.name for p in point_set.disabled}
    if "*" in disabled:
        return [instances[n] for n in enabled]
    multi: list[str] = []
    overrides: set[str] = set()
    for ref in sets["multiPoint"].enabled:
        if not isinstance(instances[ref.name], iface) or ref.name in disabled:
            continue
        if ref.name in enabled:
            overrides.add(ref.name)
            continue
        if ref.name in multi:
            raise InvalidInput("profile", f"plugins.multiPoint.enabled[{ref.name}]",
                               f"plugin {ref.name!r} already registered as {iface.__name__}")
        multi.append(ref.name)
    ordered = [n for n in enabled if n in overrides] + multi + [n for n in enabled if n not in overrides]
    for name in ordered:
        if not isinstance(instances[name], iface):
            raise InvalidInput("profile", f"plugins.{point}.enabled", f"plugin {name!r} does not extend {point}")
    return [instances[n] for n in ordered]


def build_framework(profile: Profile, global_percentage: int | None = None,
                    registry: Registry = plugin_class) -> Framework:
    sets = merged_plugins(profile.plugins)
    wanted: list[str] = []
    for point_set in sets.values():
        for ref in point_set.enabled:
            if ref.name not in wanted:
                wanted.append(ref.name)
    args = _plugin_args(profile)
    instances: dict[str, Plugin] = {}
    framework = Framework(profile.scheduler_name, {}, {}, profile.percentage_of_nodes_to_score
                          if profile.percentage_of_nodes_to_score is not None else global_percentage)
    for name in wanted:
        try:
            cls = registry(name)
        except UnknownPlugin:
            raise InvalidInput(f"profile {profile.scheduler_name}", "plugins",
                               f"plugin {name!r} is not registered") from None
        try:
            instances[name] = cls.new(args.get(name), framework)
        except (ValueError, KeyError, TypeError) as exc:
            raise InvalidInput(f"profile {profile.scheduler_name}", f"pluginConfig[{name}].args", str(exc)) from None
    points = {point: _expand(point, iface, sets, instances) for point, iface in POINTS}
    weights: dict[str, int] = {}
    for ref in sets["multiPoint"].enabled:
        weights[ref.name] = ref.weight or 1
    for ref in sets["score"].enabled:
        weights[ref.name] = ref.weight or 1
    if len(points["queueSort"]) != 1 and points["queueSort"]:
        raise InvalidInput(f"profile {profile.scheduler_name}", "plugins.queueSort",
                           "only one queue sort plugin can be enabled")
    if not points["bind"]:
        raise InvalidInput(f"profile {profile.scheduler_name}", "plugins.bind", "at least one bind plugin is needed")
    framework.install(points, weights)
    return framework


def _with_fit_ignored_resources(profile: Profile, ignored: list[str]) -> Profile:
    """Upstream scheduler.New: extender-managed resources that are ignoredByScheduler become
    NodeResourcesFit's ignoredResources (they replace the configured list, as upstream)."""
    configs = list(profile.plugin_config)
    for k, pc in enumerate(configs):
        if pc.name == names.NODE_RESOURCES_FIT:
            configs[k] = PluginConfig(name=pc.name, args={**pc.args, "ignoredResources": list(ignored)})
            break
    else:
        configs.append(PluginConfig(name=names.NODE_RESOURCES_FIT, args={"ignoredResources": list(ignored)}))
    return msgspec.structs.replace(profile, plugin_config=configs)


def build_profiles(config: KubeSchedulerConfiguration | None,
                   registry: Registry = plugin_class) -> dict[str, Framework]:
    """One framework per profile, keyed by schedulerName (a missing config means the default),
    its plugins built from `registry` (the in-tree plugins by default)."""
    config = config or KubeSchedulerConfiguration()
    profiles = config.profiles or [Profile(scheduler_name=DEFAULT_SCHEDULER_NAME)]
    ignored = [r.name for ext in config.extenders for r in ext.managed_resources if r.ignored_by_scheduler]
    out: dict[str, Framework] = {}
    for i, profile in enumerate(profiles):
        if ignored:
            profile = _with_fit_ignored_resources(profile, ignored)
        name = profile.scheduler_name or DEFAULT_SCHEDULER_NAME
        if name in out:
            raise InvalidInput("KubeSchedulerConfiguration", f"profiles[{i}].schedulerName",
                               f"duplicate profile {name!r}")
        out[name] = build_framework(profile, config.percentage_of_nodes_to_score, registry)
    return out

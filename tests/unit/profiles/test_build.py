import pytest

from shared.errors import InvalidInput
from shared.model import PluginRef, Plugins, PluginSet
from shared.profiles import merged_plugins


def names(ps: PluginSet) -> list[str]:
    return [p.name for p in ps.enabled]


def test_default_multi_point_order_and_weights() -> None:
    sets = merged_plugins(None)
    mp = sets["multiPoint"]
    assert names(mp)[:5] == ["SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName", "TaintToleration"]
    weights = {p.name: p.weight for p in mp.enabled}
    assert weights["TaintToleration"] == 3
    assert weights["NodeAffinity"] == 2
    assert weights["PodTopologySpread"] == 2
    assert weights["InterPodAffinity"] == 2
    assert weights["NodeResourcesFit"] == 1


def test_custom_disable_all_multi_point() -> None:
    custom = Plugins(multi_point=PluginSet(enabled=[PluginRef(name="NodeName")], disabled=[PluginRef(name="*")]))
    assert names(merged_plugins(custom)["multiPoint"]) == ["NodeName"]


def test_custom_entry_replaces_default_in_place() -> None:
    custom = Plugins(multi_point=PluginSet(enabled=[PluginRef(name="TaintToleration", weight=10)]))
    mp = merged_plugins(custom)["multiPoint"]
    tt = [p for p in mp.enabled if p.name == "TaintToleration"]
    assert len(tt) == 1 and tt[0].weight == 10
    assert names(mp).index("TaintToleration") == 4


def test_disable_at_one_point_keeps_others() -> None:
    custom = Plugins(score=PluginSet(disabled=[PluginRef(name="ImageLocality")]))
    sets = merged_plugins(custom)
    assert "ImageLocality" in names(sets["multiPoint"])
    assert [p.name for p in sets["score"].disabled] == ["ImageLocality"]


def test_unknown_plugin_is_invalid_input() -> None:
    from shared.model import KubeSchedulerConfiguration, Profile
    from shared.profiles import build_profiles

    plugins = Plugins(filter=PluginSet(enabled=[PluginRef(name="Nope")]))
    config = KubeSchedulerConfiguration(profiles=[Profile(plugins=plugins)])
    with pytest.raises(InvalidInput, match="not registered"):
        build_profiles(config)

"""Scheduling profiles built from a KubeSchedulerConfiguration and a plugin registry."""

from .build import Registry, build_framework, build_profiles, default_plugins, merged_plugins

__all__ = ["Registry", "build_framework", "build_profiles", "default_plugins", "merged_plugins"]

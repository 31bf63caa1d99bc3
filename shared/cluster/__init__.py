"""The cluster view folded from the log, shared by the scheduling services."""

from .view import ClusterView, Watermark, bound_copy, point_at, reach, with_nomination

__all__ = ["ClusterView", "Watermark", "bound_copy", "point_at", "reach", "with_nomination"]

"""NodeResourcesFit and NodeResourcesBalancedAllocation."""

from .balanced_allocation import BalancedAllocation, balanced_resource_scorer
from .fit import Fit, FitRequest, InsufficientResource, fits, fits_request

__all__ = ["BalancedAllocation", "Fit", "FitRequest", "InsufficientResource", "balanced_resource_scorer", "fits",
           "fits_request"]

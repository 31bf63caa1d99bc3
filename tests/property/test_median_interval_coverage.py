"""`median_interval` claims its interval holds the median of what the values sample with the
confidence it gives. Drawn many times from skewed and symmetric distributions of known median, the
share of intervals holding it is that confidence, within sampling error."""

from __future__ import annotations

import math
import random
from collections.abc import Callable

import pytest

from berth.bench.stats import median_interval

DRAWS = 4_000


@pytest.mark.parametrize("n", [3, 5, 8, 13, 20])
@pytest.mark.parametrize(("name", "draw", "true_median"), [
    # A run's pods/s against the one before: ratios with a long tail either side.
    ("lognormal", lambda rng: rng.lognormvariate(0.0, 0.2), 1.0),
    ("exponential", lambda rng: rng.expovariate(1.0), math.log(2)),
    ("uniform", lambda rng: rng.uniform(0.8, 1.2), 1.0),
])
def test_the_interval_holds_the_median_as_often_as_it_says(n: int, name: str, draw: Callable[[random.Random], float],
                                                            true_median: float) -> None:
    rng = random.Random(f"{name}/{n}")
    held, confidence = 0, 0.0
    for _ in range(DRAWS):
        low, high, confidence = median_interval([draw(rng) for _ in range(n)]) or (0.0, 0.0, 0.0)
        held += low <= true_median <= high
    # Four standard errors of a share of DRAWS: a correct claim fails this about once in 30,000.
    slack = 4 * math.sqrt(confidence * (1 - confidence) / DRAWS)
    assert abs(held / DRAWS - confidence) <= slack, (name, n, held / DRAWS, confidence)

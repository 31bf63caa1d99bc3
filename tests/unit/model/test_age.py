"""Ages as kubectl prints them: apimachinery's TestHumanDuration facts."""

from __future__ import annotations

import pytest

from shared.model.age import human_duration


@pytest.mark.parametrize(("seconds", "text"), [
    (-2, "<invalid>"), (-1, "0s"), (0, "0s"), (1, "1s"), (119, "119s"), (120, "2m"), (121, "2m1s"),
    (9 * 60 + 59, "9m59s"), (10 * 60, "10m"), (179 * 60 + 59, "179m"), (3 * 3600, "3h"), (3 * 3600 + 60, "3h1m"),
    (7 * 3600 + 59 * 60, "7h59m"), (8 * 3600, "8h"), (47 * 3600 + 59 * 60, "47h"), (48 * 3600, "2d"),
    (48 * 3600 + 3600, "2d1h"), (8 * 86400 - 3600, "7d23h"), (8 * 86400, "8d"), (2 * 365 * 86400 - 86400, "729d"),
    (2 * 365 * 86400, "2y"), (2 * 365 * 86400 + 86400, "2y1d"), (8 * 365 * 86400, "8y"),
])
def test_ages_read_as_kubectl_writes_them(seconds: int, text: str) -> None:
    assert human_duration(seconds) == text

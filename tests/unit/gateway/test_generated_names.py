"""A create's generateName, made a name as the API server makes it."""

from __future__ import annotations

from services.gateway.generated_names import ALPHABET, MAX_PREFIX, name_generated


def test_a_prefix_gets_five_random_characters_and_a_name_stays() -> None:
    meta: dict[str, object] = {"generateName": "job-"}
    name_generated(meta)
    name = str(meta["name"])
    assert name.startswith("job-") and len(name) == 9 and set(name[4:]) <= set(ALPHABET)
    named = {"name": "kept", "generateName": "job-"}
    name_generated(named)
    assert named["name"] == "kept"
    neither: dict[str, object] = {}
    name_generated(neither)
    assert "name" not in neither, "left to validation: name or generateName is required"


def test_a_long_prefix_is_cut_so_the_name_fits_63_characters() -> None:
    meta: dict[str, object] = {"generateName": "x" * 70}
    name_generated(meta)
    assert len(str(meta["name"])) == 63 and str(meta["name"]).startswith("x" * MAX_PREFIX)

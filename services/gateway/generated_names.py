"""`metadata.generateName` on a create: the API server names the object from the prefix.

As upstream's SimpleNameGenerator: the prefix, cut to 58 characters so that the name stays within
63, and five random characters from an alphabet without vowels (no words by chance) and without
characters that read alike (0/o, 1/l). Only a create (POST) does so; an apply or a replace of an
object without a name is refused, as kubectl's "cannot use generate name with apply" says.
"""

from __future__ import annotations

import secrets
from typing import Any

ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
RANDOM_LENGTH = 5
MAX_PREFIX = 63 - RANDOM_LENGTH


def name_generated(meta: dict[str, Any]) -> None:
    """Give `meta` a name from its generateName, where it has a prefix and no name."""
    prefix = meta.get("generateName")
    if meta.get("name") or not isinstance(prefix, str) or not prefix:
        return
    meta["name"] = prefix[:MAX_PREFIX] + "".join(secrets.choice(ALPHABET) for _ in range(RANDOM_LENGTH))

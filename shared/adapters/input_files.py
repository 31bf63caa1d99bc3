"""Kubernetes objects read from files or standard input ("-"), for the CLI and the services'
configuration: the reading here, the parsing and validation in the pure `shared.model.loader`."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from shared.errors import InvalidInput
from shared.model.api_fields import FieldValidation
from shared.model.loader import ClusterInput, decode_text, load_objects, parse_documents
from shared.model.validation import NameValidation


def load_files(paths: Iterable[str | Path], *, field_validation: FieldValidation = "Strict",
               names: NameValidation = "Warn") -> ClusterInput:
    docs: list[tuple[str, dict[str, Any]]] = []
    for path in paths:
        try:
            data = sys.stdin.buffer.read() if str(path) == "-" else Path(path).read_bytes()
        except OSError as exc:
            raise InvalidInput(str(path), "", f"cannot read: {exc.strerror}") from None
        text = decode_text(data, str(path))
        docs.extend((str(path), d) for d in parse_documents(text, str(path)))
    return load_objects(docs, field_validation=field_validation, names=names)

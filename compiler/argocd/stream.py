"""The plugin's stdout: one stream of documents Argo CD splits on '---' lines and reads as YAML.

Objects are written in krc's canonical YAML (the bytes `krc render` writes). CRDs, megabytes each, are written
as one line of JSON, which is YAML too (a flow mapping) and which Argo CD's stream decoder reads the same way:
it takes a few milliseconds where the YAML representer takes most of a second per CRD.
"""
from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from ..documents import yamlio
from .selection import AnnotatedCrd

# Characters a YAML 1.1 reader takes verbatim inside a double-quoted scalar; anything else (C0/C1 controls,
# DEL, NEL, the line and paragraph separators, a byte-order mark) makes the document fall back to YAML.
_NOT_VERBATIM_CLASS = "[^\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"


@functools.cache
def _not_verbatim() -> re.Pattern[str]:
    return re.compile(_NOT_VERBATIM_CLASS)  # compiling this class takes ~10 ms: only for text that is not plain ASCII


def _verbatim(text: str) -> bool:
    # json.dumps escapes every C0 control, so plain ASCII text can only hold DEL among the refused characters
    return ("\x7f" not in text) if text.isascii() else not _not_verbatim().search(text)


def _crd_text(text: str, document: Callable[[], dict[str, Any]]) -> str:
    return text + "\n" if _verbatim(text) else yamlio.dump(document())


def _text(document: dict[str, Any] | AnnotatedCrd) -> str:
    if isinstance(document, AnnotatedCrd):
        return _crd_text(document.canonical(), lambda: document.document)
    if document.get("kind") == "CustomResourceDefinition":
        return _crd_text(json.dumps(document, sort_keys=True, ensure_ascii=False, separators=(",", ":")),
                         lambda: document)
    return yamlio.dump(document)


def dump_stream(documents: Sequence[dict[str, Any] | AnnotatedCrd]) -> str:
    """Every document after a '---' line; identical documents give identical bytes."""
    return "".join("---\n" + _text(document) for document in documents)

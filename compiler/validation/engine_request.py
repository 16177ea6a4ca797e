"""Asking the engine's `validate` op (the API server's own code for custom resources) about a batch of objects.

One request per CRD carries every object of that CRD; requests for several CRDs are submitted together and
answered side by side. Each CRD is sent in full once per engine process and named by the digest the engine
answers after that; when the engine no longer holds it (`needCRD`: a restarted engine, or its cache evicted
it), the request is sent again with the CRD.
"""
from __future__ import annotations

from typing import Any

from ..charts import crds_ahead
from ..native import client
from ..native.channel import RawJSON

TIMEOUT_SECONDS = 120.0



class ValidateRequest:
    """One CRD's objects under way in the engine; `results` waits for the verdicts, one per item in order.

    An item is {"object": document} for a create, with "old" (the stored object) for an update."""

    def __init__(self, crd: dict[str, Any] | RawJSON, digest: str, items: list[dict[str, Any]], what: str) -> None:
        """`crd` as sent: its canonical JSON text when the caller has it (neither decoded nor encoded again:
        megabytes per CRD), else the document."""
        self._crd = crd
        self._digest, self._items, self._what = digest, items, what
        # sent once (maybe ahead, maybe not compiled yet), then named by the engine's digest
        known = client.engine_name("crd", digest) or crds_ahead.take(digest)
        self._by_digest = known is not None
        args: dict[str, Any] = {"objects": items, **({"crdDigest": known} if known else {"crd": crd}),
                                "share": client.shares_schemas()}
        self._pending = client.Pending("validate", args, what, TIMEOUT_SECONDS)

    def results(self) -> list[dict[str, Any]]:
        result = self._pending.result()
        if result.get("needCRD") and self._by_digest:
            result = client.call("validate", {"objects": self._items, "crd": self._crd,
                                              "share": client.shares_schemas()}, what=self._what,
                                 timeout=TIMEOUT_SECONDS)
        client.remember("crd", self._digest, str(result["crdDigest"]))
        results = list(result["results"])
        if len(results) != len(self._items):
            raise client.EngineEnded(f"{self._what}: the engine answered {len(results)} verdicts for "
                                     f"{len(self._items)} objects")
        return results


def validate(crd: dict[str, Any] | RawJSON, digest: str, items: list[dict[str, Any]], what: str) \
        -> list[dict[str, Any]]:
    """The engine's verdict on each item, the CRD sent in full only when the engine lacks it."""
    return ValidateRequest(crd, digest, items, what).results()

"""The Application health check in deploy/argocd/argocd-cm-patch.yaml, run by a real Lua runtime: a child
Application holds back the next wave until it is synced to its current spec and healthy."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import lupa
import yaml

PATCH = Path(__file__).resolve().parents[2] / "deploy" / "argocd" / "argocd-cm-patch.yaml"
KEY = "resource.customizations.health.argoproj.io_Application"


def health(status: dict[str, Any] | None) -> tuple[str, str]:
    script = yaml.safe_load(PATCH.read_text())["data"][KEY]
    lua = lupa.LuaRuntime()
    obj = {} if status is None else {"status": status}
    lua.globals().obj = lua.table_from(obj, recursive=True)
    result = lua.execute(script)
    return str(result["status"]), str(result["message"])


def test_kustomization_applies_the_patch() -> None:
    kustomization = yaml.safe_load((PATCH.parent / "kustomization.yaml").read_text())
    assert {"path": "argocd-cm-patch.yaml"} in kustomization["patches"]


def test_a_new_application_is_progressing() -> None:
    assert health(None)[0] == "Progressing"


def test_out_of_sync_holds_back_the_next_wave_even_if_resources_are_healthy() -> None:
    # a chart bump: the CRDs app's spec changed, its old CRDs are still healthy
    assert health({"sync": {"status": "OutOfSync"}, "health": {"status": "Healthy"}})[0] == "Progressing"


def test_synced_and_healthy_releases_the_next_wave() -> None:
    assert health({"sync": {"status": "Synced"}, "health": {"status": "Healthy"}}) == ("Healthy", "")


def test_degraded_is_reported_at_once() -> None:
    status, message = health({"sync": {"status": "OutOfSync"},
                              "health": {"status": "Degraded", "message": "namespace not found"}})
    assert (status, message) == ("Degraded", "namespace not found")

"""The plugin enforces the project's CUE policies: Argo CD refuses to sync what CI refuses to merge. A violation
fails `krc argocd generate` (exit 2, nothing on stdout, the policy and the environment line named) on the
compiling path and on the warm one; a verdict without errors is kept, so a warm answer loads no CUE; a changed
policy file is a new verdict; an environment's `lint.rules` setting lowers a policy for the plugin as for lint."""
from __future__ import annotations

from pathlib import Path

from argocd_sidecar import argocd_environ, parameters, run
from test_plugin_warm_start import _loaded, _probe

FOREIGN_IMAGE = "extends: dev\nray:\n  image: quay.io/someone/ray:2.58.0\n"


def test_a_policy_violation_fails_generate_cold_and_warm(app_dir: Path, cache_dir: Path):
    (app_dir / "environments" / "dev-foreign.yaml").write_text(FOREIGN_IMAGE)
    environ = argocd_environ(cache_dir, parameters("dev-foreign"))
    cold = run(app_dir, environ)
    assert cold.returncode == 2 and cold.stdout == b""
    assert "policy/image-registry" in cold.stderr and "environments/dev-foreign.yaml:3" in cold.stderr
    warm, _ = _probe(app_dir, environ)  # the kept verdict holds an error: refused again, the same way
    assert warm.returncode == 2 and warm.stdout == b""
    assert b"policy/image-registry" in warm.stderr and b"environments/dev-foreign.yaml:3" in warm.stderr


def test_a_kept_clean_verdict_answers_warm_without_cue_and_a_new_policy_is_judged(app_dir: Path, cache_dir: Path):
    environ = argocd_environ(cache_dir, parameters("dev", crds="exclude"))
    first = run(app_dir, environ)
    assert first.returncode == 0, first.stderr
    warm, modules = _probe(app_dir, environ)
    assert warm.returncode == 0 and warm.stdout == first.stdout
    assert not _loaded(modules, "compiler.policy")
    # a new policy dev breaks: the kept verdict was for the old policy files, so the plugin judges again
    (app_dir / "policies" / "one-worker-group.cue").write_text(
        "// at most zero worker groups (a policy dev breaks)\npackage policy\n\n"
        "env: clusters: [...{workerGroups: []}]\n")
    refused, _ = _probe(app_dir, environ)
    assert refused.returncode == 2 and refused.stdout == b""
    assert b"policy/one-worker-group" in refused.stderr


def test_a_lowered_policy_does_not_stop_the_sync(app_dir: Path, cache_dir: Path):
    (app_dir / "environments" / "dev-foreign.yaml").write_text(
        FOREIGN_IMAGE + "lint:\n  rules:\n    policy/image-registry:\n      severity: warning\n"
                        "      reason: the quay.io mirror is approved until the registry move\n")
    environ = argocd_environ(cache_dir, parameters("dev-foreign", crds="exclude"))
    result = run(app_dir, environ)
    assert result.returncode == 0, result.stderr
    assert "kind: RayCluster" in result.stdout.decode()

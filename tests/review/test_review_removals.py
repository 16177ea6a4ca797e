"""Removals are changes: a removed environment, an orphaned golden/<env>/ and every object that would be pruned."""
from __future__ import annotations

import json
import shutil

from review_support import commit_project, report_env, run

from compiler.output import folders, layout
from compiler.project.paths import Project

PROD = "prod-eks-gpu"


def objects_in_golden(project: Project) -> int:
    """The objects golden/ holds for prod: every one would be pruned."""
    return sum(1 for path in folders.read_tree(project.golden_dir / PROD) if path.startswith(
        tuple(f"{folder}/" for folder in layout.OBJECT_DIRS)))


def test_a_removed_environment_is_reported_against_base_in_every_format(accepted: Project):
    pruned = objects_in_golden(accepted)
    commit_project(accepted, "prod and dev")
    accepted.environment_file(PROD).unlink()
    shutil.rmtree(accepted.golden_dir / PROD)  # git rm environments/prod... golden/prod...: the working tree is clean
    commit_project(accepted, "remove prod")

    assert run(accepted, "check").exit_code == 0  # nothing left behind in the working tree
    text = run(accepted, "diff", "--base", "HEAD~1")
    assert text.exit_code == 1, text.output
    assert (f"== {PROD}: ENVIRONMENT REMOVED: environments/{PROD}.yaml is gone and golden/ still has it; deploying "
            f"this prunes all {pruned} objects") in text.output
    assert "- RayService ray-prod/summarizer (ray.io/v1) removed: " in text.output
    assert ("    [outage] deleted: its Ray clusters and Serve applications are deleted: the service goes down"
            in text.output)
    assert "capacity at max scale: CPU 285 -> 0, GPU 23 -> 0, memory 1148Gi -> 0" in text.output
    assert text.output.rstrip().endswith(f"1 of 2 environments changed (1 removed: {PROD})")

    report = json.loads(run(accepted, "diff", "--base", "HEAD~1", "--format", "json").output)
    prod = report_env(report, PROD)
    assert report["removedEnvironments"] == [PROD] and report["changed"] is True
    assert prod["removed"] is True and prod["counts"] == {"added": 0, "removed": pruned, "changed": 0, "unchanged": 0}
    service = next(o for o in prod["objects"] if o["ref"] == "RayService ray-prod/summarizer")
    assert service["labels"] == [{"code": "deleted", "impact": "outage", "message": "deleted: its Ray clusters and "
                                  "Serve applications are deleted: the service goes down"}]
    assert service["summary"].startswith("RayService ray-prod/summarizer: 32 CPU, 4 GPU, 128Gi memory at max; "
                                     "upgrades by NewClusterWithIncrementalUpgrade")
    summaries = {o["ref"]: o["summary"] for o in prod["objects"]}
    assert summaries["RayJob ray-prod/train-resnet"] == ("RayJob ray-prod/train-resnet: 16 CPU, 2 GPU, 64Gi memory at "
                                                         "max; deadline 4h, 30m to start")
    assert summaries["RayCronJob ray-prod/nightly-eval"].endswith("; schedule '0 2 * * *'; each run: deadline 1h, "
                                                                  "15m to start")
    assert "- RayJob ray-prod/train-resnet (ray.io/v1) removed: 16 CPU, 2 GPU, 64Gi memory at max; deadline 4h" \
        in text.output
    # the worst consequences first: every outage before what only stops being managed
    impacts = [o["labels"][0]["impact"] for o in prod["objects"]]
    assert impacts == sorted(impacts, key=["outage", "replacement", "restart", "scale", "metadata only"].index)
    workloads = next(o for o in prod["objects"] if o["ref"] == f"Application argocd/krc-{PROD}-workloads")
    assert "deletes every resource this Application deployed" in workloads["labels"][0]["message"]

    body = run(accepted, "diff", "--base", "HEAD~1", "--format", "markdown").output
    assert f"### :x: Environment removed: `{PROD}`" in body and "**2 of 2" not in body
    assert f"| `{PROD}` **(removed)** | 0 | {pruned} | 0 | 0 |" in body
    assert body.index("Environment removed") < body.index("### Summary")
    assert "**outage**: deleted: its Ray clusters and Serve applications are deleted: the service goes down" in body


def test_an_orphaned_golden_folder_fails_check_and_diff_with_what_is_pruned(accepted: Project):
    pruned = objects_in_golden(accepted)
    accepted.environment_file(PROD).unlink()  # golden/prod-eks-gpu/ stays behind
    check = run(accepted, "check")
    assert check.exit_code == 1
    assert (f"orphaned: golden/{PROD}/ (environments/{PROD}.yaml is gone): deploying this removes the environment"
            in check.output)
    assert f"gone: golden/{PROD}/manifests/rayservice-summarizer.yaml" in check.output
    assert ("  pruned RayService ray-prod/summarizer: outage: deleted: its Ray clusters and Serve applications are "
            "deleted: the service goes down") in check.output

    report = json.loads(run(accepted, "diff", "--format", "json").output)
    assert report["removedEnvironments"] == [PROD] and report_env(report, PROD)["counts"]["removed"] == pruned
    shutil.rmtree(accepted.golden_dir / PROD)
    assert run(accepted, "check").exit_code == 0 and run(accepted, "diff").exit_code == 0


def test_a_golden_folder_counts_as_an_environment_only_when_a_file_lies_below_it(accepted: Project):
    """An orphaned golden/<env>/ is reported only when it holds a file, however deep (empty folders are what git
    leaves behind on no one's machine, and say nothing)."""
    (accepted.golden_dir / "empty-tree" / "manifests" / "deeper").mkdir(parents=True)
    (accepted.golden_dir / "deep-file" / "manifests" / "deeper").mkdir(parents=True)
    (accepted.golden_dir / "deep-file" / "manifests" / "deeper" / "x.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: left-behind\n  namespace: ray\n")
    report = json.loads(run(accepted, "diff", "--format", "json").output)
    assert report["removedEnvironments"] == ["deep-file"]

"""Environment lint settings reach schema checks too, and `krc rules` documents them."""
from __future__ import annotations

from click.testing import CliRunner

from compiler import pipeline
from compiler.cli import main
from compiler.pipeline import lint_targets
from compiler.project.paths import Project

TYPO = """\
        raw:
          template:
            spec:
              priorityClassNam: high
"""


def with_typo(project: Project, settings: str = "") -> None:
    dev = project.environment_file("dev")
    dev.write_text(dev.read_text() + TYPO + settings)


def test_an_unknown_raw_field_stops_the_render_at_the_environment_line(project_without_policies: Project):
    project = project_without_policies
    with_typo(project)
    findings = lint_targets(["dev"], project_root=project.root)
    [finding] = [f for f in findings if f.rule == "schema/unknown-field"]
    assert finding.severity == "error" and "did you mean 'priorityClassName'?" in finding.help
    # the API server's words (strict field validation)
    assert finding.message == 'unknown field "spec.workerGroupSpecs[0].template.spec.priorityClassNam"'
    assert finding.location.file == "environments/dev.yaml"


def test_a_schema_check_can_be_lowered_with_a_reason_even_unquoted_off(project_without_policies: Project):
    project = project_without_policies
    with_typo(project,
              "lint:\n  rules:\n    schema/unknown-field: {severity: warning, reason: field pruned on purpose}\n")
    findings = lint_targets(["dev"], project_root=project.root)
    assert [f.severity for f in findings if f.rule == "schema/unknown-field"] == ["warning"]
    pipeline.render_to_disk(project, ["dev"])  # no longer an error: the render is written
    text = project.environment_file("dev").read_text().replace("severity: warning", "severity: off")
    project.environment_file("dev").write_text(text)
    assert [f for f in lint_targets(["dev"], project_root=project.root) if f.rule == "schema/unknown-field"] == []


def test_rules_lists_and_documents_schema_checks():
    listing = CliRunner().invoke(main, ["rules"])
    assert listing.exit_code == 0 and "schema/unknown-field" in listing.output
    document = CliRunner().invoke(main, ["rules", "schema/unknown-field"])
    assert document.exit_code == 0
    assert "prunes it silently" in document.output and "Fails:" in document.output and "Passes:" in document.output


def test_argocd_objects_in_paths_are_checked_against_the_given_argocd_crds(tmp_path, shared_dir):
    app = tmp_path / "app.yaml"
    app.write_text("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: x, namespace: argocd}\n"
                   "spec:\n  project: default\n  destination: {server: https://kubernetes.default.svc}\n"
                   "  source: {repoURL: https://example.com/r.git, path: ., plugin: {parameter: []}}\n")
    assert lint_targets([str(app)], cwd=tmp_path) == []  # not a KubeRay object: passed over without CRDs
    findings = lint_targets([str(app)], cwd=tmp_path, argocd_crds=str(shared_dir / "argocd" / "crds"))
    assert [(f.rule, f.location.line) for f in findings] == [("schema/unknown-field", 7)]
    assert findings[0].message == 'unknown field "spec.source.plugin.parameter"'
    assert "did you mean 'parameters'?" in findings[0].help

"""Loading environments: extends chains, schema errors with file:line:col, required keys, explain."""
from __future__ import annotations

import pytest

from compiler.diagnostics.problems import KrcError
from compiler.environment.model import load_environment
from compiler.project.paths import Project


def write(project: Project, name: str, text: str) -> None:
    project.environment_file(name).write_text(text, encoding="utf-8")


def messages(err: pytest.ExceptionInfo) -> list[str]:
    return [p.one_line() for p in err.value.problems]


def load_errors(project: Project, name: str, text: str) -> list[str]:
    """The one-line problems of writing environment `name` and loading it, which must fail."""
    write(project, name, text)
    with pytest.raises(KrcError) as err:
        load_environment(project, name)
    return messages(err)


def test_dev_resolves_through_base_with_provenance(project: Project):
    env = load_environment(project, "dev")
    assert env.files == ("environments/base.yaml", "environments/dev.yaml")
    assert env.data["operator"]["chart"]["version"] == "1.7.0"
    assert env.data["ray"]["image"] == "rayproject/ray:2.58.0-py312"
    chain = env.chain_of(("ray", "image"))
    assert [loc.file for loc in chain] == ["environments/base.yaml"]
    assert env.location_of(("clusters", "ray-cpu-demo", "workerGroups", "cpu", "maxReplicas")).file == (
        "environments/dev.yaml")


def test_prod_overrides_the_chart_version_of_base(project: Project):
    env = load_environment(project, "prod-eks-gpu")
    assert env.data["operator"]["chart"]["version"] == "1.6.2"
    assert [loc.file for loc in env.chain_of(("operator", "chart", "version"))] == [
        "environments/base.yaml", "environments/prod-eks-gpu.yaml"]


def test_extends_may_chain(project: Project):
    write(project, "_gpu", "extends: base\ncpuOnly: false\nray: {image: custom}\n")
    write(project, "staging", "extends: _gpu\nproduction: false\n")
    env = load_environment(project, "staging")
    assert env.files == ("environments/base.yaml", "environments/_gpu.yaml", "environments/staging.yaml")
    assert env.data["ray"]["image"] == "custom"
    assert "staging" in project.environment_names() and "_gpu" not in project.environment_names()


def test_extends_cycle_is_an_error(project: Project):
    write(project, "b", "extends: a\n")
    lines = load_errors(project, "a", "extends: b\n")
    assert "cycle: a -> b -> a" in lines[0]
    assert lines[0].startswith("environments/b.yaml:1:1:")


def test_missing_parent_names_the_extends_line(project: Project):
    lines = load_errors(project, "lonely", "description: x\nextends: nowhere\n")
    assert lines[0].startswith(
        "environments/lonely.yaml:2:1: error: environment file environments/nowhere.yaml does not exist")


def test_unknown_key_has_file_line_col_and_did_you_mean(project: Project):
    [line] = load_errors(project, "typo", "extends: base\nclusters:\n  - name: c\n    workerGroups:\n"
                                          "      - name: g\n        maxReplica: 3\n")
    assert line.startswith("environments/typo.yaml:6:9: error: unknown key 'maxReplica' in "
                           "clusters[c].workerGroups[g]; did you mean 'maxReplicas'?")
    assert "did you mean 'maxReplicas'?" in line


def test_every_problem_of_every_layer_is_reported(project: Project):
    lines = load_errors(project, "bad", "extends: base\ncpuOnly: maybe\nnamespce: x\n"
                                        "clusters:\n  - name: Bad_Name\n")
    assert any(line.startswith("environments/bad.yaml:2:1: error: cpuOnly: \"maybe\" should be true or false")
               for line in lines)
    assert any(line.startswith("environments/bad.yaml:3:1:") and "did you mean 'namespace'?" in line for line in lines)
    assert any(line.startswith("environments/bad.yaml:5:5:") and '"Bad_Name" is not a valid Kubernetes name' in line
               for line in lines)


def test_required_after_merge(project: Project):
    lines = load_errors(project, "bare", "description: nothing extended\n")
    assert any("operator.chart.version is not set" in line for line in lines)


def test_duplicate_keys_are_errors(project: Project):
    lines = load_errors(project, "dup", "extends: base\nproduction: true\nproduction: false\n")
    assert lines[0].startswith("environments/dup.yaml:3:1: error: duplicate key 'production'")


def test_yaml_syntax_error_points_at_the_position(project: Project):
    lines = load_errors(project, "broken", "extends: base\nclusters: [\n")
    assert lines[0].startswith("environments/broken.yaml:3:")
    assert "invalid YAML" in lines[0]


def test_resolve_dotted_paths_by_name(project: Project):
    env = load_environment(project, "prod-eks-gpu")
    path = env.resolve_dotted("clusters.ray-gpu-train.workerGroups.gpu-a10g.gpu")
    assert path == ("clusters", "ray-gpu-train", "workerGroups", "gpu-a10g", "gpu")
    assert env.get(path) == 1
    with pytest.raises(KrcError, match="has no 'nope'"):
        env.resolve_dotted("clusters.nope")


def test_a_name_twice_in_one_list_is_an_error(project: Project):
    lines = load_errors(project, "twice", "extends: dev\nclusters:\n  - name: ray-cpu-demo\n    workerGroups:\n"
                                          "      - name: cpu\n        cpu: 2\n      - name: cpu\n        cpu: 4\n")
    [line] = lines
    assert line.startswith("environments/twice.yaml:7:9: error: clusters[ray-cpu-demo].workerGroups names 'cpu' twice")


def test_a_gpu_count_under_node_selector_is_moved_not_quoted(project: Project):
    """Quoting it (the fix for other numbers there) would leave a node label no node carries and no GPU."""
    lines = load_errors(project, "deep", "extends: dev\nclusters:\n  - name: ray-cpu-demo\n    workerGroups:\n"
                                         "      - name: cpu\n        nodeSelector:\n          gpu: 1\n")
    [line] = lines
    assert "gpu: 1 under nodeSelector is a node label, not a resource amount" in line
    assert "move gpu: 1 out of nodeSelector to the group itself" in line and "quote it" not in line
    lines = load_errors(project, "deep", "extends: dev\nclusters:\n  - name: ray-cpu-demo\n    workerGroups:\n"
                                         "      - name: cpu\n        nodeSelector:\n          zone: 1\n")
    assert "quote it: zone: '1'" in lines[0]  # any other label: a number is quoted


def test_a_number_where_text_is_expected_says_to_quote_it(project: Project):
    lines = load_errors(project, "numeric", "extends: base\nray: {version: 2.58}\n")
    assert "version: 2.58 is read as a number, but this field is text; quote it: version: '2.58'" in lines[0]


def test_required_item_fields_may_come_from_any_layer(project: Project):
    write(project, "_crons", "extends: base\ncronJobs:\n  - name: nightly\n    schedule: '0 1 * * *'\n"
                             "    job: {entrypoint: python x.py}\n")
    write(project, "partial", "extends: _crons\ncronJobs:\n  - name: nightly\n    suspend: true\n")
    assert load_environment(project, "partial").get(("cronJobs", "nightly", "schedule")) == "0 1 * * *"
    lines = load_errors(project, "incomplete", "extends: base\ncronJobs:\n  - name: weekly\n    suspend: true\n")
    assert lines == [
        "environments/incomplete.yaml:3:5: error: cronJobs[weekly] has no 'job' in any layer; add job: to it",
        "environments/incomplete.yaml:3:5: error: cronJobs[weekly] has no 'schedule' in any layer; add schedule: to it"]


def test_an_index_into_a_named_list_resolves_to_the_item_name(project: Project):
    env = load_environment(project, "dev")
    assert env.resolve_dotted("clusters.0.workerGroups.0.maxReplicas") == (
        "clusters", "ray-cpu-demo", "workerGroups", "cpu", "maxReplicas")
    assert env.get(env.resolve_dotted("clusters.0.name")) == "ray-cpu-demo"


def test_a_name_ending_in_a_newline_is_refused_at_its_line_on_one_line(project: Project):
    """Schema patterns read `$` as the end of the text (JSON Schema and the API server do; Python's `$` would let
    "ray-cpu-demo\\n" pass, and Kubernetes refuses it); the path names the item quoted, so the error is one line."""
    lines = load_errors(project, "newline",
                        'extends: dev\nclusters:\n  - name: "ray-cpu-demo\\n"\n    head: {cpu: 1}\n')
    [line] = [m for m in lines if "not a valid Kubernetes name" in m]
    assert line.startswith('environments/newline.yaml:3:5: error: clusters["ray-cpu-demo\\n"].name: ')
    assert "\n" not in line

"""Both real engines behind the one interface: output, error locations, import boundaries."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from compiler.diagnostics.problems import KrcError
from compiler.engines import SUFFIXES, engine_for, engine_of_suffix


@pytest.fixture
def templates(tmp_path: Path) -> Path:
    folder = tmp_path / "templates"
    (folder / "lib").mkdir(parents=True)
    return folder


def render(templates: Path, name: str, context: dict) -> list:
    path = templates / name
    [docs] = engine_for(path).render([path], templates, context, templates.parent)
    return docs


def test_engines_are_registered_by_suffix():
    assert set(SUFFIXES) == {".j2", ".jsonnet"}
    with pytest.raises(KrcError, match="no engine renders 'x.txt'"):
        engine_for(Path("x.txt"))
    assert engine_of_suffix(".jsonnet") is engine_for(Path("a.jsonnet"))  # one engine per suffix


# What a krc process loads before it renders: the whole compiling stack, then the Jsonnet engine; Jinja2 and
# urllib.request (with http.client and ssl) only once a `.j2` template is rendered or a chart downloaded.
_LOADED_BY_A_JSONNET_RENDER = """
import sys
from pathlib import Path
import compiler.cli, compiler.pipeline.jobs
from compiler.engines import engine_for
engine_for(Path("a.jsonnet"))
print(" ".join(m for m in ("jinja2", "urllib.request", "_gojsonnet") if m in sys.modules))
"""


def test_jinja2_and_urllib_request_load_only_when_needed():
    loaded = subprocess.run([sys.executable, "-c", _LOADED_BY_A_JSONNET_RENDER], capture_output=True, text=True,
                            check=True).stdout.split()
    assert loaded == ["_gojsonnet"]


def test_jinja_renders_yaml_documents(templates: Path):
    (templates / "a.yaml.j2").write_text("name: {{ env.name }}\nlist: {{ env.things | to_yaml }}\n---\nb: 2\n")
    assert render(templates, "a.yaml.j2", {"env": {"name": "x", "things": ["p", "q: r"]}}) == [
        {"name": "x", "list": ["p", "q: r"]}, {"b": 2}]


def test_jinja_undefined_is_an_error_with_template_line(templates: Path):
    (templates / "a.yaml.j2").write_text("a: 1\nb: {{ env.missing }}\n")
    with pytest.raises(KrcError) as err:
        render(templates, "a.yaml.j2", {"env": {}})
    problem = err.value.problems[0]
    assert (problem.location.file, problem.location.line) == ("templates/a.yaml.j2", 2)
    assert "'dict object' has no attribute 'missing'" in problem.message


def test_jinja_syntax_error_names_the_line(templates: Path):
    (templates / "a.yaml.j2").write_text("a: 1\n{% if %}\n")
    with pytest.raises(KrcError) as err:
        render(templates, "a.yaml.j2", {})
    assert str(err.value.problems[0].location) == "templates/a.yaml.j2:2:1"


def test_jsonnet_reads_the_context_and_imports_from_templates(templates: Path):
    (templates / "lib" / "l.libsonnet").write_text("{ double(x):: x * 2 }\n")
    (templates / "a.jsonnet").write_text(
        "local l = import 'lib/l.libsonnet';\n"
        "[{ n: l.double(std.extVar('env').n), y: std.native('yaml')('{\"k\": [1]}') }]\n")
    assert render(templates, "a.jsonnet", {"env": {"n": 21}}) == [{"n": 42, "y": "k:\n- 1\n"}]


def test_jsonnet_batch_renders_each_template_once(templates: Path):
    (templates / "a.jsonnet").write_text("[{a: 1}]")
    (templates / "b.jsonnet").write_text("{b: 2}")
    paths = [templates / "a.jsonnet", templates / "b.jsonnet"]
    assert engine_of_suffix(".jsonnet").render(paths, templates, {}, templates.parent) == [[{"a": 1}], [{"b": 2}]]


def test_jsonnet_error_names_template_file_and_line(templates: Path):
    (templates / "a.jsonnet").write_text("local x = 1;\n\n[error 'boom: fix me']\n")
    with pytest.raises(KrcError) as err:
        render(templates, "a.jsonnet", {})
    problem = err.value.problems[0]
    assert (problem.location.file, problem.location.line) == ("templates/a.jsonnet", 3)
    assert problem.message.startswith("boom: fix me")


def test_jsonnet_imports_may_not_leave_templates(templates: Path, tmp_path: Path):
    (tmp_path / "secret.libsonnet").write_text("{}")
    (templates / "a.jsonnet").write_text("import '../secret.libsonnet'")
    with pytest.raises(KrcError, match="leaves templates/"):
        render(templates, "a.jsonnet", {})


def test_jsonnet_syntax_error_reads_cleanly(templates: Path):
    (templates / "a.jsonnet").write_text("local x = 1;;\n[x]\n")
    with pytest.raises(KrcError) as err:
        render(templates, "a.jsonnet", {})
    problem = err.value.problems[0]
    assert (problem.location.file, problem.location.line, problem.location.column) == ("templates/a.jsonnet", 1, 13)
    assert problem.message.startswith("Unexpected"), problem.message

"""Many contexts in one Jsonnet run (JsonnetEngine.render_many): the same documents as one run per context, and
no answer at all (None) when the run fails, so the caller renders each context on its own and reports its error."""
from __future__ import annotations

from pathlib import Path

import pytest

from compiler.diagnostics.problems import KrcError
from compiler.engines import jsonnet
from compiler.engines.jsonnet import JsonnetEngine


@pytest.fixture
def templates(tmp_path: Path) -> Path:
    folder = tmp_path / "templates"
    (folder / "lib").mkdir(parents=True)
    (folder / "lib" / "l.libsonnet").write_text("{ label(env):: env.name + '-' + std.toString(env.n) }\n")
    (folder / "b.jsonnet").write_text("{ shared: 'from b' }\n")
    (folder / "a.jsonnet").write_text(
        "// a comment on the first line\n"
        "local l = import 'lib/l.libsonnet';\n"
        "local env = std.extVar('env');\n"
        "[{ label: l.label(env), twice: env.n * 2, chart: std.extVar('chart').version, b: (import 'b.jsonnet'),\n"
        "   file: std.thisFile, yaml: std.native('yaml')(std.manifestJsonMinified(env)) }]\n")
    return folder


CONTEXTS = [{"env": {"name": f"env{i}", "n": i, "text": "ü ✓ \\ \"q\"" * i}, "chart": {"version": f"1.{i}.0"}}
            for i in range(4)]


def test_many_contexts_give_what_one_run_each_gives(templates: Path):
    engine = JsonnetEngine()
    paths = [templates / "a.jsonnet", templates / "b.jsonnet"]
    one_by_one = [engine.render(paths, templates, context, templates.parent) for context in CONTEXTS]
    assert engine.render_many(paths, templates, CONTEXTS, templates.parent) == one_by_one
    assert one_by_one[3][0][0]["label"] == "env3-3"
    assert one_by_one[3][0][0]["file"] == str((templates / "a.jsonnet").resolve())  # std.thisFile unchanged


def test_a_failing_context_fails_the_batch_and_its_own_run_names_the_line(templates: Path):
    (templates / "c.jsonnet").write_text("local env = std.extVar('env');\n\n"
                                         "if env.n == 2 then error 'two is refused' else [{ n: env.n }]\n")
    engine = JsonnetEngine()
    path = [templates / "c.jsonnet"]
    assert engine.render_many(path, templates, CONTEXTS, templates.parent) is None
    assert engine.render_many(path, templates, [CONTEXTS[0], CONTEXTS[1]], templates.parent) == [
        [[{"n": 0}]], [[{"n": 1}]]]
    with pytest.raises(KrcError) as err:
        engine.render(path, templates, CONTEXTS[2], templates.parent)
    location = err.value.problems[0].location
    assert (location.file, location.line) == ("templates/c.jsonnet", 3)


def test_a_refused_import_fails_the_batch(templates: Path, tmp_path: Path):
    (tmp_path / "secret.libsonnet").write_text("{}")
    (templates / "d.jsonnet").write_text("importstr '../secret.libsonnet'")
    engine = JsonnetEngine()
    assert engine.render_many([templates / "d.jsonnet"], templates, CONTEXTS, templates.parent) is None


def test_an_unknown_external_variable_fails_the_batch(templates: Path):
    (templates / "e.jsonnet").write_text("[std.extVar('nope')]")
    assert JsonnetEngine().render_many([templates / "e.jsonnet"], templates, CONTEXTS, templates.parent) is None


@pytest.mark.parametrize("target", ["#krc-batch:../../secret.libsonnet", "#krc-batch:/etc/hostname"])
def test_the_batch_scheme_is_confined_like_any_import(templates: Path, tmp_path: Path, target: str):
    (tmp_path / "secret.libsonnet").write_text("{}")
    (templates / "f.jsonnet").write_text(f"import '{target}'")
    with pytest.raises(KrcError, match="leaves templates/|not found"):
        JsonnetEngine().render([templates / "f.jsonnet"], templates, {}, templates.parent)


def test_an_import_read_before_is_read_again_once_it_changed(templates: Path):
    """Imports are kept for the command (each batch runs Jsonnet twice), and believed only while the file found
    is the one that was read."""
    engine = JsonnetEngine()
    (templates / "g.jsonnet").write_text("[(import 'lib/l.libsonnet').label(std.extVar('env'))]")
    path = [templates / "g.jsonnet"]
    assert engine.render(path, templates, CONTEXTS[1], templates.parent) == [["env1-1"]]
    library = templates / "lib" / "l.libsonnet"
    library.write_text("{ label(env):: 'changed ' + env.name }\n")  # the same size would do: its times change
    assert engine.render(path, templates, CONTEXTS[1], templates.parent) == [["changed env1"]]


def test_an_import_read_before_and_then_swapped_for_a_link_outside_is_refused(templates: Path, tmp_path: Path):
    (tmp_path / "secret.libsonnet").write_text("{ label(env):: 'the secret' }\n")
    engine = JsonnetEngine()
    (templates / "h.jsonnet").write_text("[(import 'lib/l.libsonnet').label(std.extVar('env'))]")
    path = [templates / "h.jsonnet"]
    assert engine.render(path, templates, CONTEXTS[2], templates.parent) == [["env2-2"]]
    library = templates / "lib" / "l.libsonnet"
    library.unlink()
    library.symlink_to(tmp_path / "secret.libsonnet")
    with pytest.raises(KrcError, match="leaves templates/"):
        engine.render(path, templates, CONTEXTS[2], templates.parent)


def test_the_imports_kept_are_bounded(templates: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(jsonnet, "_FOUND", {})
    monkeypatch.setattr(jsonnet, "_FOUND_LIMIT", 2)
    engine = JsonnetEngine()
    paths = [templates / "a.jsonnet", templates / "b.jsonnet"]  # three imports: the library and both templates
    expected = engine.render(paths, templates, CONTEXTS[1], templates.parent)
    assert 0 < len(jsonnet._FOUND) <= 2
    assert engine.render(paths, templates, CONTEXTS[1], templates.parent) == expected

"""`krc render` of a few changed environments compiles them while a thread checks the other rendered/ folders
(pipeline/compile_ahead.py, OutputStamps.checked_in_background): each environment is still evaluated once, its
error reported once, its folder written as before, and the run says which environments it compiled."""
from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

import pytest

from compiler import pipeline
from compiler.diagnostics.problems import KrcError
from compiler.output import folders
from compiler.pipeline import context as context_module
from compiler.pipeline.compile_ahead import compile_few_ahead
from compiler.pipeline.context import Context
from compiler.project.paths import Project
from compiler.results.output_stamps import OutputStamps

CACHED = pipeline.RunOptions(cache=True, workers=1)


@pytest.fixture
def evaluations(monkeypatch: pytest.MonkeyPatch) -> collections.Counter[str]:
    """How many times each environment's templates were evaluated (render_environment, as rendered_together
    calls it)."""
    counted: collections.Counter[str] = collections.Counter()
    real = context_module.render_environment

    def counting(project: Project, env: Any, *args: Any, **kwargs: Any) -> Any:
        counted[env.name] += 1
        return real(project, env, *args, **kwargs)

    monkeypatch.setattr(context_module, "render_environment", counting)
    return counted


def edit_dev(project: Project, old: str, new: str) -> None:
    path = project.environment_file("dev")
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_a_changed_environment_is_compiled_once_and_reported_compiled(project: Project, private_cache: Path,
                                                                      evaluations: collections.Counter[str]):
    names = project.environment_names()
    pipeline.render_to_disk(project, names, CACHED)
    before = folders.read_tree(project.rendered_dir)
    evaluations.clear()
    edit_dev(project, "maxReplicas: 2", "maxReplicas: 3")
    results = pipeline.render_to_disk(project, names, CACHED)
    assert [r.name for r in results if r.compiled] == ["dev"] and evaluations == {"dev": 1}
    after = folders.read_tree(project.rendered_dir)
    assert "maxReplicas: 3" in after["dev/manifests/raycluster-ray-cpu-demo.yaml"].decode()
    assert {p: c for p, c in after.items() if not p.startswith("dev/")} == \
        {p: c for p, c in before.items() if not p.startswith("dev/")}
    # nothing changed since: nothing compiled, nothing written
    evaluations.clear()
    results = pipeline.render_to_disk(project, names, CACHED)
    assert [r.name for r in results if r.compiled or r.staged] == [] and evaluations == {}


def test_an_environment_that_fails_ahead_is_evaluated_once_and_its_error_reported(
        project: Project, private_cache: Path, evaluations: collections.Counter[str]):
    names = project.environment_names()
    pipeline.render_to_disk(project, names, CACHED)
    written = folders.read_tree(project.rendered_dir)
    evaluations.clear()
    edit_dev(project, "argocd:\n", "argocd:\n  repoURL: null\n")  # templates/objects/argocd.jsonnet refuses
    with pytest.raises(KrcError, match="argocd.repoURL is not set") as raised:
        pipeline.render_to_disk(project, names, CACHED)
    assert len(raised.value.problems) == 1 and evaluations == {"dev": 1}
    assert folders.read_tree(project.rendered_dir) == written  # nothing written


def test_only_a_few_compile_ahead_in_one_process_and_only_with_the_cache(project: Project, private_cache: Path,
                                                                       evaluations: collections.Counter[str]):
    names = project.environment_names()
    pooled = pipeline.RunOptions(cache=True, workers=2, repaid_by=1)  # a worker for each environment
    context = Context.of(project, pooled)
    compile_few_ahead(context, names, pooled)  # left to the jobs, which share them with a worker
    assert context.compiled_ahead == set() and evaluations == {}
    context = Context.of(project, CACHED)
    compile_few_ahead(context, names, CACHED)
    assert context.compiled_ahead == set(names) and all(context.cache.has_entry(n) for n in names)
    assert evaluations == {name: 1 for name in names}
    evaluations.clear()
    uncached = pipeline.RunOptions(cache=False, workers=1)
    compile_few_ahead(Context.of(project, uncached), names, uncached)  # the jobs could not find what it compiled
    assert evaluations == {}
    results = pipeline.render_to_disk(project, names, uncached)
    assert sorted(r.name for r in results if r.compiled) == names and evaluations == {name: 1 for name in names}


def test_the_folders_checked_in_background_are_the_ones_current_holds(project: Project, private_cache: Path,
                                                                      monkeypatch: pytest.MonkeyPatch):
    names = project.environment_names()
    pipeline.render_to_disk(project, names, CACHED)
    touched = project.rendered_dir / "dev" / "manifests" / "namespace-ray-demo.yaml"
    touched.write_text(touched.read_text() + "# edited by hand\n")
    stamps = OutputStamps(project.rendered_dir, True)
    held = stamps.checked_in_background(names)()
    assert held == {n: k for n in names if (k := OutputStamps(project.rendered_dir, True).current(n))}
    assert "dev" not in held and sorted(held) == [n for n in names if n != "dev"]

    def broken(self: OutputStamps, name: str) -> str | None:
        raise RuntimeError("a bug in the check")

    monkeypatch.setattr(OutputStamps, "current", broken)
    with pytest.raises(RuntimeError, match="a bug in the check"):  # the thread's failure is the caller's
        OutputStamps(project.rendered_dir, True).checked_in_background(names)()

"""Environments rendered with their templates evaluated together (render.prepare_templates, used by the pipeline's
jobs): the same renders as one at a time, and an environment that fails gets exactly the error of its own render,
file:line included."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compiler import pipeline
from compiler.charts import vendored
from compiler.diagnostics.problems import KrcError
from compiler.engines import jsonnet
from compiler.environment.model import load_environment
from compiler.output import layout
from compiler.pipeline import context as pipeline_context
from compiler.pipeline import environments as pipeline_environments
from compiler.pipeline.environments import chart_pin
from compiler.project.paths import Project
from compiler.render.templates import JSONNET_BATCH, Render, prepare_templates, render_environment


def render_environments(project: Project, pairs: list) -> list:
    """What the pipeline does with a job's environments: one batch evaluation, then each render."""
    out = []
    for (env, chart), prepared in zip(pairs, prepare_templates(project, pairs), strict=True):
        try:
            out.append(render_environment(project, env, chart, prepared))
        except KrcError as err:
            out.append(err)
    return out


def test_the_batch_prepares_every_environment(project: Project):
    prepared = prepare_templates(project, _pairs(project))
    assert all(p.get("values") and p.get(".jsonnet") for p in prepared)


def _pairs(project: Project) -> list:
    pairs = []
    for name in project.environment_names():
        env = load_environment(project, name)
        pin = chart_pin(env)
        pairs.append((env, vendored.load_vendored_chart(project.vendor_dir, pin.name, pin.version)))
    return pairs


def test_together_gives_the_same_renders(project: Project):
    pairs = _pairs(project)
    assert len(pairs) >= 2
    together = render_environments(project, pairs)
    for (env, chart), render in zip(pairs, together, strict=True):
        assert isinstance(render, Render)
        alone = render_environment(project, env, chart)
        assert render.objects == alone.objects and render.helm_values == alone.helm_values
        assert layout.render_files(render, True) == layout.render_files(alone, True)


def _break_prod(project: Project) -> None:
    path = project.environment_file("prod-eks-gpu")
    path.write_text(path.read_text().replace("    schedule: '0 2 * * *'\n",
                                             "    schedule: '0 2 * * *'\n    timeZone: Europe/Berlin\n"))


def test_a_failing_environment_gets_its_own_error_and_the_others_render(project: Project):
    _break_prod(project)
    pairs = _pairs(project)
    together = render_environments(project, pairs)
    for (env, chart), render in zip(pairs, together, strict=True):
        if env.name != "prod-eks-gpu":
            assert isinstance(render, Render)
            continue
        assert isinstance(render, KrcError)
        with pytest.raises(KrcError) as alone:
            render_environment(project, env, chart)
        assert render.problems == alone.value.problems
        assert render.problems[0].location.file == "templates/objects/raycronjobs.jsonnet"


@pytest.mark.parametrize("workers", [1, 2])
def test_render_names_the_template_line_whatever_the_jobs(project: Project, workers: int):
    _break_prod(project)
    with pytest.raises(KrcError) as alone:
        pipeline.compile_environment(project, "prod-eks-gpu")
    run = pipeline.RunOptions(cache=False, workers=workers, repaid_by=1)  # with 2, a worker however few to compile
    with pytest.raises(KrcError) as err:
        pipeline.render_to_disk(project, project.environment_names(), run)
    assert alone.value.problems[0] in err.value.problems
    assert not (project.root / "rendered").exists() or not any((project.root / "rendered").iterdir())


def test_an_environment_whose_render_failed_is_not_rendered_again(project: Project, monkeypatch: pytest.MonkeyPatch):
    """Its error from the joint render is the one reported: a template that runs past KRC_TEMPLATE_SECONDS costs
    the limit once, not twice."""
    _break_prod(project)
    renders: list[str] = []

    def counted(project: Project, env, chart, prepared=None, templates=None) -> Render:
        renders.append(env.name)
        return render_environment(project, env, chart, prepared, templates)

    monkeypatch.setattr(pipeline_context, "render_environment", counted)
    monkeypatch.setattr(pipeline_environments, "render_environment", counted)
    with pytest.raises(KrcError) as err:
        pipeline.render_to_disk(project, project.environment_names(), pipeline.RunOptions(cache=False, workers=1))
    assert err.value.problems[0].location.file == "templates/objects/raycronjobs.jsonnet"
    assert sorted(renders) == sorted(project.environment_names())



@pytest.mark.parametrize("command", ["lint", "diff"])
def test_lint_and_diff_evaluate_a_jobs_templates_in_one_jsonnet_run(command: str, project_without_policies: Project,
                                                                    private_cache: Path,
                                                                    monkeypatch: pytest.MonkeyPatch):
    """As render does: one run for the values templates and one for the object templates of every
    environment the compile cache lacks (each run parses the templates again, about 7 ms), not two per
    environment; what it compiles is each environment's own render, and a broken environment gets the error
    its own render reports."""
    project = project_without_policies
    runs: list[bool] = []
    evaluate = jsonnet._evaluate_within_deadline

    def counted(*args: Any, **kwargs: Any) -> str:
        runs.append(not kwargs.get("ext_codes"))  # a batch reads its contexts itself; one environment's run is given
        # its context as external code
        return evaluate(*args, **kwargs)

    monkeypatch.setattr(jsonnet, "_evaluate_within_deadline", counted)
    names = project.environment_names()
    assert len(names) >= 2
    run_command = pipeline.lint_environments if command == "lint" else pipeline.review_project
    cached = pipeline.RunOptions(cache=True, workers=1)
    run_command(project, tuple(names), run=cached)
    assert runs == [True, True]
    entries = pipeline_context.Context.of(project, cached).cache
    context = pipeline_context.Context.of(project, cached)
    for name in names:  # what it compiled and kept is each environment's own render (lint keeps no files)
        entry = entries.lookup(name)
        assert entry is not None and (entry.files is None) == (command == "lint")
        assert pipeline_context.compiled_files(context, entry) == layout.render_files(
            pipeline.compile_environment(project, name), False)
    runs.clear()
    uncached = pipeline.RunOptions(cache=False, workers=1)
    run_command(project, (names[0],), run=uncached)
    assert runs == [False, False]  # one environment: its own runs, as always

    _break_prod(project)
    with pytest.raises(KrcError) as own:
        pipeline.compile_environment(project, "prod-eks-gpu")
    with pytest.raises(KrcError) as together:
        run_command(project, tuple(names), run=uncached)
    assert own.value.problems[0] in together.value.problems


def test_a_long_job_is_evaluated_a_few_environments_at_a_time(project: Project,
                                                             monkeypatch: pytest.MonkeyPatch):
    """A lint job holds 10 environments; go-jsonnet's memory grows with a run's batch, so they are evaluated
    JSONNET_BATCH at a time, each environment prepared as in a run of its own."""
    pairs = _pairs(project)
    long_job = (pairs * (JSONNET_BATCH + 1))[:JSONNET_BATCH + 2]
    runs: list[int] = []
    real = jsonnet.JsonnetEngine.render_many

    def counting(self: Any, paths: Any, templates_dir: Any, contexts: list, *args: Any) -> Any:
        runs.append(len(contexts))
        return real(self, paths, templates_dir, contexts, *args)

    monkeypatch.setattr(jsonnet.JsonnetEngine, "render_many", counting)
    prepared = prepare_templates(project, long_job)
    # the values of 5, then of 2, each followed by their objects
    assert runs == [JSONNET_BATCH, JSONNET_BATCH, 2, 2]
    for (env, chart), mine in zip(long_job, prepared, strict=True):
        assert render_environment(project, env, chart, mine).objects == render_environment(project, env, chart).objects


def test_each_environment_of_a_job_is_validated_once_while_the_next_renders(project: Project,
                                                                            monkeypatch: pytest.MonkeyPatch):
    """rendered_together sends an environment's objects to the engine as soon as it is rendered; the compile takes
    those verdicts (no second request) and finds what validating on its own finds."""
    from compiler.native import client
    from compiler.pipeline.context import Context, compile_validated, rendered_together
    from compiler.results.compile_cache import CompileCache

    names = project.environment_names()
    sent: list[tuple[str, bool]] = []  # (what, the CRD sent in full)
    real = client.Pending

    def recording(op: str, args: dict[str, Any], what: str, timeout: float) -> client.Pending:
        if op == "validate" and args.get("objects"):
            sent.append((what, "crd" in args))
        return real(op, args, what, timeout)

    monkeypatch.setattr(client, "Pending", recording)
    context = Context(project, CompileCache(project, enabled=False))
    ahead = rendered_together(context, names)
    assert all(not isinstance(r, KrcError) and r.validating is not None for r in ahead.values())
    started = list(sent)
    assert started  # sent while rendering, before any compile asked
    compiled = {name: compile_validated(project, context.cache, name, peers=context.peers, ahead=ahead[name])
                for name in names}
    # the compile took the verdicts started: nothing asked again but a CRD the engine had not yet taken in, when
    # the validation (naming it by digest) overtook the request that sent it ahead (`needCRD`: sent in full)
    again = sent[len(started):]
    assert all(full for _, full in again) and len(again) <= len(started)
    for name in names:
        alone = pipeline_environments.validate_render(compiled[name][1], context.peers)  # sent afresh
        validated = compiled[name][2]
        assert validated is not None
        assert validated.context.objects == alone.context.objects
        assert validated.schema_problems == alone.schema_problems


def test_verdicts_started_for_other_objects_are_not_taken(project: Project):
    """A validation started for one render's objects, finished with a context of other objects, is done again for
    those: verdicts only ever go to the objects they were given for."""
    from compiler.lint import environment_context
    from compiler.lint.schema_step import start_documents, validate

    pairs = _pairs(project)
    first, second = (render_environment(project, env, chart) for env, chart in pairs[:2])
    started = start_documents(first.chart.crds, [o.document for o in first.objects])
    other = environment_context(second)
    taken, problems = started.finish(other)
    fresh, fresh_problems = validate(other)
    assert taken.objects == fresh.objects and problems == fresh_problems
    assert [o.document.get("metadata", {}).get("namespace") for o in taken.objects] == \
        [o.document.get("metadata", {}).get("namespace") for o in second.objects]

"""The compile cache and the parallel map: what is compiled again (counted by the pipeline's own results), what a
corrupt or foreign cache does (nothing: it is ignored), and that neither changes a single byte of the output."""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from cache_support import entry_files
from project_support import copy_environment, engine_unavailable

from compiler import pipeline
from compiler.cache import digests as content_digests
from compiler.cache import signatures
from compiler.diagnostics.problems import KrcError
from compiler.k8s.destinations import Destination, peer_digests
from compiler.output import folders, layout
from compiler.pipeline import worker_pool
from compiler.pipeline.context import Context
from compiler.pipeline.work import Work
from compiler.policy import find_engine
from compiler.project.paths import Project
from compiler.results import compile_cache
from compiler.results.compiled_records import file_digests

REPO_ROOT = Path(__file__).resolve().parents[1]
SEQUENTIAL = pipeline.RunOptions(cache=False, workers=1)
PARALLEL = pipeline.RunOptions(cache=False, workers=2, repaid_by=1)  # a worker even for one environment
CACHED = pipeline.RunOptions(cache=True, workers=1)


@pytest.fixture
def cache_dir(private_cache: Path) -> Path:
    return private_cache


def compiled(results: list[pipeline.EnvironmentResult]) -> list[str]:
    return sorted(r.name for r in results if r.compiled)


def entries(cache_dir: Path) -> list[Path]:
    return entry_files(cache_dir, compile_cache.COMPILED)


def test_a_second_render_compiles_nothing_and_writes_the_same_bytes(project: Project, cache_dir: Path):
    names = project.environment_names()
    assert compiled(pipeline.render_to_disk(project, names, CACHED)) == names
    first = folders.read_tree(project.rendered_dir)
    assert len(entries(cache_dir)) == len(names)
    assert compiled(pipeline.render_to_disk(project, names, CACHED)) == []
    assert folders.read_tree(project.rendered_dir) == first
    assert compiled(pipeline.render_to_disk(project, names, pipeline.RunOptions(cache=False))) == names
    assert folders.read_tree(project.rendered_dir) == first


def test_only_the_changed_environment_is_compiled_again(project: Project, cache_dir: Path):
    names = project.environment_names()
    pipeline.render_to_disk(project, names, CACHED)
    path = project.environment_file("dev")
    path.write_text(path.read_text().replace("maxReplicas: 2", "maxReplicas: 3"))
    assert compiled(pipeline.render_to_disk(project, names, CACHED)) == ["dev"]
    cluster = (project.rendered_dir / "dev" / "manifests" / "raycluster-ray-cpu-demo.yaml").read_text()
    assert "maxReplicas: 3" in cluster
    assert [m.environment for m in pipeline.check_golden(project, names, CACHED) if not m.clean] == ["dev"]


@pytest.mark.parametrize("change", ["layer", "template", "chart lock"])
def test_what_every_environment_depends_on_invalidates_every_entry(project: Project, cache_dir: Path, change: str):
    names = project.environment_names()
    pipeline.render_to_disk(project, names, CACHED)
    if change == "layer":
        base = project.environment_file("base")
        base.write_text(base.read_text().replace("targetRevision: main", "targetRevision: release"))
    elif change == "template":
        template = project.templates_dir / "objects" / "core.jsonnet"
        template.write_text("// a comment changes the bytes, so the key\n" + template.read_text())
    else:
        lock = project.vendor_dir / "charts.lock.yaml"
        lock.write_text(lock.read_text() + "\n")
    assert compiled(pipeline.render_to_disk(project, names, CACHED)) == names
    if change == "layer":
        mismatches = pipeline.check_golden(project, names, CACHED)
        assert all("manifests/application-krc-dev.yaml" in m.changed for m in mismatches if m.environment == "dev")


def test_corrupt_or_foreign_entries_are_ignored_and_replaced(project: Project, cache_dir: Path):
    names = project.environment_names()
    pipeline.render_to_disk(project, names, CACHED)
    expected = folders.read_tree(project.rendered_dir)
    shutil.rmtree(project.rendered_dir)  # so that nothing is skipped: every folder is written from the entries
    dev, prod = sorted(entries(cache_dir), key=lambda p: json.loads(p.read_bytes().split(b"\n")[1])["name"])
    raw = dev.read_bytes()
    dev.write_bytes(raw.replace(b"maxReplicas: 2", b"maxReplicas: 9"))  # payload no longer matches its checksum
    header, _, payload = prod.read_bytes().partition(b"\n")
    kind = compile_cache.COMPILED
    foreign = header.replace(f" {kind.name}/{kind.version} ".encode(), f" {kind.name}/{kind.version + 1} ".encode())
    prod.write_bytes(foreign + b"\n" + payload)
    assert compiled(pipeline.render_to_disk(project, names, CACHED)) == names
    assert folders.read_tree(project.rendered_dir) == expected
    for path in entries(cache_dir):
        path.write_bytes(path.read_bytes()[:100])  # truncated
    shutil.rmtree(project.rendered_dir)
    assert compiled(pipeline.render_to_disk(project, names, CACHED)) == names
    assert folders.read_tree(project.rendered_dir) == expected


def test_no_cache_neither_reads_nor_writes(project: Project, cache_dir: Path):
    names = project.environment_names()
    assert compiled(pipeline.render_to_disk(project, names, SEQUENTIAL)) == names
    assert entries(cache_dir) == []


def test_rendered_folders_are_rewritten_only_when_changed_or_touched(project: Project, cache_dir: Path):
    names = project.environment_names()
    pipeline.render_to_disk(project, names, CACHED)
    values = project.rendered_dir / "dev" / layout.VALUES_FILE
    inode = values.stat().st_ino
    pipeline.render_to_disk(project, names, CACHED)
    assert values.stat().st_ino == inode  # unchanged and untouched: left in place
    expected = values.read_bytes()
    values.write_bytes(b"edited by hand\n")
    pipeline.render_to_disk(project, names, CACHED)
    assert values.read_bytes() == expected


def test_accepting_an_environment_into_golden_leaves_the_others_cached(project: Project, cache_dir: Path):
    """Whether golden/ holds an environment reaches the others' results only through a destination collision, so
    `krc golden` of one environment does not make every other one compile (and rendered/ be written) again."""
    names = project.environment_names()
    shutil.rmtree(project.golden_dir / "dev")
    pipeline.render_to_disk(project, names, CACHED)
    folder = (project.rendered_dir / "prod-eks-gpu").stat().st_ino
    pipeline.accept_golden(project, ["dev"], CACHED)
    assert compiled(pipeline.render_to_disk(project, names, CACHED)) == []
    assert (project.rendered_dir / "prod-eks-gpu").stat().st_ino == folder  # left in place


def test_an_environment_s_peers_digest_covers_only_the_destinations_it_reads() -> None:
    dev = Destination("dev", "environments/dev.yaml", "in-cluster", ("ray-demo", "kuberay-system"))
    prod = Destination("prod", "environments/prod.yaml", "eks", ("ray-prod", "kuberay-prod"))
    staging = Destination("staging", "environments/staging.yaml", "in-cluster", ("ray-demo",))
    accepted = dataclasses.replace(dev, accepted=True)
    before = peer_digests([dev, prod])
    assert peer_digests([accepted, prod]) == before  # golden/ state counts only where destinations collide
    with_staging = peer_digests([dev, prod, staging])
    assert with_staging["prod"] == before["prod"]  # a new environment elsewhere leaves prod's results alone
    assert with_staging["dev"] != before["dev"]  # ... and reaches the one it collides with
    assert peer_digests([accepted, prod, staging])["staging"] != with_staging["staging"]  # staging's finding moves
    moved = peer_digests([dataclasses.replace(dev, cluster="other"), prod, staging])
    assert moved["staging"] != with_staging["staging"] and moved["prod"] == before["prod"]
    assert peer_digests([prod, staging])["prod"] == before["prod"]  # dev no longer loads: prod is untouched
    # an environment that extends another one reads where that one deploys (an inherited destination)
    child = Destination("child", "environments/child.yaml", "eks-2", ("ray-child",), layers=("environments/prod.yaml",))
    assert peer_digests([dev, prod, child])["child"] != peer_digests(
        [dev, dataclasses.replace(prod, file="environments/other.yaml"), child])["child"]


def test_an_environment_that_no_longer_loads_leaves_the_others_cached(project: Project, cache_dir: Path):
    """A typo in one environment file (exit 2) or a new environment elsewhere compiles none of the others again."""
    names = project.environment_names()
    pipeline.render_to_disk(project, names, CACHED)
    prod = project.environment_file("prod-eks-gpu")
    text = prod.read_text(encoding="utf-8")
    prod.write_text(text.replace("namespace: ray-prod", "namespace: [ray-prod", 1), encoding="utf-8")
    assert Context.of(project, CACHED).cache.has_entry("dev")
    with pytest.raises(KrcError):
        pipeline.render_to_disk(project, names, CACHED)
    prod.write_text(text, encoding="utf-8")
    copy_environment(project, "prod-eks-gpu")  # a cluster of its own: it collides with nobody
    assert all(Context.of(project, CACHED).cache.has_entry(name) for name in names)
    assert compiled(pipeline.render_to_disk(project, project.environment_names(), CACHED)) == ["prod-eks-gpu-copy"]


def test_a_changed_base_layer_rewrites_the_folders_of_what_extends_it(project: Project, cache_dir: Path):
    """The environments' own files keep their bytes (their compile keys hold still); their output does not."""
    names = project.environment_names()
    pipeline.render_to_disk(project, names, CACHED)
    cache = Context.of(project, CACHED).cache
    assert all(cache.has_entry(name) for name in names)
    base = project.environment_file("base")
    base.write_text(base.read_text().replace("rayproject/ray:2.58.0-py312\n", "rayproject/ray:2.58.1-py312\n", 1))
    # work to do (rendered together, in worker processes), not cache hits to answer one by one
    assert not any(Context.of(project, CACHED).cache.has_entry(name) for name in names)
    assert compiled(pipeline.render_to_disk(project, names, CACHED)) == names
    for name in names:
        rendered = folders.read_tree(project.rendered_dir / name)
        assert any(b"rayproject/ray:2.58.1-py312" in content for content in rendered.values()), name
        assert not any(b"rayproject/ray:2.58.0-py312\n" in content for content in rendered.values()), name


def forbid_full_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object) -> None:
        raise AssertionError("a full cache entry was read")

    monkeypatch.setattr(compile_cache.CompileCache, "lookup", refuse)


@pytest.mark.usefixtures("project_without_policies")
def test_up_to_date_outputs_are_answered_from_the_summaries(project: Project, cache_dir: Path,
                                                            monkeypatch: pytest.MonkeyPatch):
    names = project.environment_names()
    rendered = pipeline.render_to_disk(project, names, CACHED)
    checked = pipeline.check_golden(project, names, CACHED)
    assert all(m.clean for m in checked)
    with monkeypatch.context() as patch:
        forbid_full_entries(patch)
        again = pipeline.render_to_disk(project, names, CACHED)
        assert [dataclasses.replace(r, compiled=False, staged=None) for r in rendered] == again
        assert pipeline.check_golden(project, names, CACHED) == checked
    # a golden file that differs is compared from the full entry, and named
    manifest = next((project.golden_dir / "dev" / layout.MANIFESTS_DIR).glob("*.yaml"))
    manifest.write_text(manifest.read_text() + "# edited\n")
    [dev] = [m for m in pipeline.check_golden(project, names, CACHED) if m.environment == "dev"]
    assert dev.changed == (f"{layout.MANIFESTS_DIR}/{manifest.name}",)
    # a summary that cannot be trusted is ignored: the full entry answers
    for summary in entry_files(cache_dir, compile_cache.SUMMARIES):
        summary.write_bytes(summary.read_bytes()[:40])
    assert pipeline.render_to_disk(project, names, CACHED) == again


def test_parallel_output_is_byte_identical_to_sequential(tmp_path: Path, project_without_policies: Project,
                                                         cache_dir: Path):
    """render, lint and diff. Without policies/: policies in worker processes are
    test_policy_batches_find_what_one_engine_run_finds's subject (three CUE engine runs here otherwise)."""
    one = project_without_policies  # two environments, so the pool has work for both processes (a job each)
    dev = one.environment_file("dev")
    dev.write_text(dev.read_text().replace("maxReplicas: 2", "maxReplicas: 3"))  # a change for the review
    shutil.copytree(one.root, tmp_path / "two")
    two = Project(tmp_path / "two")
    assert len(one.environment_names()) == 2
    results = [pipeline.render_to_disk(one, one.environment_names(), SEQUENTIAL),
               pipeline.render_to_disk(two, two.environment_names(), PARALLEL)]
    assert [sorted(compiled(r)) for r in results] == [sorted(one.environment_names())] * 2
    assert folders.read_tree(one.rendered_dir) == folders.read_tree(two.rendered_dir)
    assert pipeline.lint_environments(one, (), run=SEQUENTIAL) == pipeline.lint_environments(two, (), run=PARALLEL)
    reviews = [pipeline.review_project(p, p.environment_names(), run=run) for p, run in ((one, SEQUENTIAL),
                                                                                         (two, PARALLEL))]
    assert reviews[0] == reviews[1] and reviews[0].changed


def test_an_error_in_one_environment_writes_nothing_in_parallel(project: Project, cache_dir: Path):
    copy_environment(project, "dev")
    path = project.environment_file("dev-copy")
    path.write_text(path.read_text().replace("maxReplicas: 2", "maxReplicas: -1"))
    with pytest.raises(KrcError):
        pipeline.render_to_disk(project, project.environment_names(), PARALLEL)
    assert not project.rendered_dir.exists() or list(project.rendered_dir.iterdir()) == []


def test_a_worker_is_started_only_for_enough_environments_to_compile():
    two = pipeline.RunOptions(workers=2)
    assert two.workers_for(Work.RENDER, 12) == 1 and two.workers_for(Work.RENDER, 13) == 2
    assert two.workers_for(Work.LINT, 10) == 1 and two.workers_for(Work.LINT, 11) == 2
    assert two.workers_for(Work.REVIEW, 16) == 1 and two.workers_for(Work.REVIEW, 500) == 2
    assert pipeline.RunOptions(workers=1).workers_for(Work.LINT, 500) == 1
    assert pipeline.RunOptions(workers=4).workers_for(Work.RENDER, 30) == 3
    assert PARALLEL.workers_for(Work.RENDER, 2) == 2 and PARALLEL.workers_for(Work.RENDER, 0) == 1


def test_two_environments_to_compile_start_no_worker(project_without_policies: Project, cache_dir: Path,
                                                     monkeypatch: pytest.MonkeyPatch):
    """Two jobs to compile, two cores: a worker's start would cost more than the compile it takes over."""
    pools: list[int | None] = []

    class Recording(worker_pool.WorkerPool):
        def __init__(self, count: int, initializer: Any) -> None:
            pools.append(count)
            super().__init__(count, initializer)

    monkeypatch.setattr(worker_pool, "WorkerPool", Recording)
    names = project_without_policies.environment_names()
    assert compiled(pipeline.render_to_disk(project_without_policies, names, pipeline.RunOptions(workers=2))) == names
    assert pools == []
    one = project_without_policies
    assert pipeline.lint_environments(one, (), run=pipeline.RunOptions(cache=False, workers=2)) == \
        pipeline.lint_environments(one, (), run=SEQUENTIAL)
    assert pools == []


def policy_project(project: Project) -> Project:
    # dev is not production and may not use GPUs (policies/dev-no-gpu.cue): give it one
    path = project.environment_file("dev")
    path.write_text(path.read_text().replace("        memory: 2Gi\n", "        memory: 2Gi\n        gpu: 1\n", 1)
                    .replace("cpuOnly: true", "cpuOnly: false"))
    return project


def test_policy_results_come_from_the_cache_without_starting_the_engine(tmp_path: Path, project: Project,
                                                                        cache_dir: Path,
                                                                        monkeypatch: pytest.MonkeyPatch):
    project = policy_project(project)
    engine = find_engine()
    first = pipeline.check_policies(project, (), engine, CACHED)
    assert any(f.rule == "policy/dev-no-gpu" for f in first.findings)
    # no engine can start now: a second run that needed it would fail
    engine_unavailable(monkeypatch, tmp_path)
    assert pipeline.check_policies(project, (), engine, CACHED) == first
    policy = project.policies_dir / "dev-no-gpu.cue"
    policy.write_text(policy.read_text() + "\n// changed\n")
    with pytest.raises(KrcError, match="is not an executable file"):
        pipeline.check_policies(project, (), engine, CACHED)
    monkeypatch.delenv("KRC_ENGINE")
    assert pipeline.check_policies(project, (), engine, CACHED) == first


def test_policy_batches_find_what_one_engine_run_finds(project: Project, cache_dir: Path):
    project = policy_project(project)
    copy_environment(project, "dev")
    engine = find_engine()
    one_run = pipeline.check_policies(project, (), engine, SEQUENTIAL)
    # two engine runs in parallel work, one in a worker process (the engine sent along), one in this process:
    # dev and dev-copy, then prod
    batched = pipeline.check_policies(project, (), engine, dataclasses.replace(PARALLEL, policy_batch=2))
    assert batched == one_run
    assert {f.message.split(":")[0] for f in one_run.findings} == {"environment dev", "environment dev-copy"}


def test_argocd_generate_reads_only_its_environment(project: Project, cache_dir: Path):
    project.environment_file("prod-eks-gpu").write_text("clusters: [unclosed\n")  # the others may be broken
    request = {"ARGOCD_ENV_KRC_ENVIRONMENT": "dev"}
    cold = pipeline.argocd_generate(project, request, {}, run=CACHED)
    assert len(entries(cache_dir)) == 1
    warm = pipeline.argocd_generate(project, request, {}, run=CACHED)
    assert warm == cold and cold.count > 0


def test_entries_record_the_layers_they_were_built_from(project: Project, cache_dir: Path):
    pipeline.check_golden(project, ["dev"], CACHED)
    [entry] = entries(cache_dir)
    payload = json.loads(entry.read_bytes().split(b"\n", 1)[1])
    base = project.environment_file("base")
    assert ["environments/base.yaml", content_digests.path_digest(base)] in payload["inputs"]
    assert os.path.commonpath([entry, cache_dir]) == str(cache_dir)


def test_krcs_fingerprint_covers_every_module_of_its_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A change anywhere in krc's code (a rule, not only the cache's own modules) makes every key new; compiled
    bytecode does not count."""
    package = tmp_path / "compiler"
    shutil.copytree(content_digests.PACKAGE_DIR, package, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(content_digests, "PACKAGE_DIR", package)

    def fingerprint() -> str:
        content_digests.krc_fingerprint.cache_clear()
        return content_digests.krc_fingerprint()

    try:
        first = fingerprint()
        (package / "rules" / "__pycache__").mkdir(exist_ok=True)
        (package / "rules" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"bytecode")
        assert fingerprint() == first
        rule = package / "rules" / "kuberay_name.py"
        rule.write_text(rule.read_text(encoding="utf-8") + "# changed\n", encoding="utf-8")
        assert fingerprint() != first
    finally:
        content_digests.krc_fingerprint.cache_clear()


def test_krcs_fingerprint_is_remembered_under_its_files_signatures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Every command works out krc's fingerprint: a memo of the code files' signatures answers it without reading
    them, is believed only while every file keeps its signature, and is kept only when each is old enough to
    trust; without the cache (None) nothing is read or kept."""
    package = tmp_path / "compiler"
    shutil.copytree(content_digests.PACKAGE_DIR, package, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(content_digests, "PACKAGE_DIR", package)
    memo = tmp_path / "cache"
    memo.mkdir(mode=0o700)
    key = content_digests.cache_key(content_digests.__version__, str(package))

    def fingerprint(folder: Path | None) -> str:
        content_digests.krc_fingerprint.cache_clear()
        return content_digests.krc_fingerprint(str(folder) if folder else None)

    try:
        monkeypatch.setattr(signatures, "RACY_SECONDS", 3600.0)  # every file just copied: too young to trust
        first = fingerprint(memo)
        assert content_digests.FINGERPRINTS.read_json(key, memo) is None
        monkeypatch.setattr(signatures, "RACY_SECONDS", 0.0)
        assert fingerprint(None) == first and not (memo / content_digests.FINGERPRINTS.name).exists()
        assert fingerprint(memo) == first
        kept = content_digests.FINGERPRINTS.read_json(key, memo)
        assert kept["fingerprint"] == first and len(kept["files"]) > 200
        planted = "f" * 64  # the memo answers: no file is read while every one keeps its signature
        content_digests.FINGERPRINTS.write_json(key, {**kept, "fingerprint": planted}, memo)
        assert fingerprint(memo) == planted
        rule = package / "rules" / "kuberay_name.py"
        before = rule.stat()
        text = rule.read_text(encoding="utf-8")
        rule.write_text(text[:-1] + ("#" if text[-1] != "#" else "\n"), encoding="utf-8")  # one byte other
        os.utime(rule, ns=(before.st_atime_ns, before.st_mtime_ns))  # same size and time: the change time moved
        changed = fingerprint(memo)
        assert changed not in (planted, first) and changed == fingerprint(None)
    finally:
        content_digests.krc_fingerprint.cache_clear()


@pytest.mark.usefixtures("project_without_policies")
def test_lint_keeps_no_files_and_the_next_command_makes_them_from_its_entry(project: Project, cache_dir: Path,
                                                                          monkeypatch: pytest.MonkeyPatch):
    """`krc lint` writes and compares no files, so its entries hold none (their summaries no digests); a render or
    check after it compiles nothing, makes the files from the objects as its own render would, byte for byte, and
    keeps them, so the command after that is answered from the summaries again."""
    names = project.environment_names()
    pipeline.render_to_disk(project, names, pipeline.RunOptions(cache=False))
    expected = folders.read_tree(project.rendered_dir)
    shutil.rmtree(project.rendered_dir)

    pipeline.lint_environments(project, tuple(names), run=CACHED)
    cache = Context.of(project, CACHED).cache
    for name in names:
        entry, summary = cache.lookup(name), cache.summary(name)
        assert entry is not None and entry.files is None
        assert summary is not None and summary.file_digests is None
        assert cache.has_entry(name)

    assert compiled(pipeline.render_to_disk(project, names, CACHED)) == []
    assert folders.read_tree(project.rendered_dir) == expected
    cache = Context.of(project, CACHED).cache
    for name in names:
        entry, summary = cache.lookup(name), cache.summary(name)
        assert entry is not None and entry.files == folders.read_tree(project.golden_dir / name)
        assert summary is not None and summary.file_digests == file_digests(entry.files)
    with monkeypatch.context() as patch:
        forbid_full_entries(patch)
        assert all(m.clean for m in pipeline.check_golden(project, names, CACHED))


@pytest.mark.usefixtures("project_without_policies")
def test_a_check_after_lint_compares_the_files_made_from_its_entry(project: Project, cache_dir: Path):
    names = project.environment_names()
    pipeline.lint_environments(project, tuple(names), run=CACHED)
    assert all(m.clean for m in pipeline.check_golden(project, names, CACHED))
    manifest = next((project.golden_dir / "dev" / layout.MANIFESTS_DIR).glob("*.yaml"))
    manifest.write_text(manifest.read_text() + "# edited\n")
    [dev] = [m for m in pipeline.check_golden(project, names, CACHED) if m.environment == "dev"]
    assert dev.changed == (f"{layout.MANIFESTS_DIR}/{manifest.name}",)

"""Shared fixtures: the upstream material beside the checkout, a vendored chart cache, a project copy.

The tests' project is their own: `tests/fixtures/project/` holds its environments/ and golden/, so a team editing
the shipped environments/ (and accepting golden/) never breaks the tool's tests; the shipped files are checked by
`make render` (krc check). Templates, policies and deploy/ are the tool's code and come from the repository.
Tests never write into the real repository: a project fixture is a copy in tmp_path, and a guard fails the
session if golden/ (the shipped one or the fixture's) changed.
"""
from __future__ import annotations

import gc
import hashlib
import os
import shutil
from pathlib import Path

import pytest
import run_shared
import worker_exit
from hypothesis import settings
from project_support import FIXTURE_PROJECT, REPO_ROOT, copy_project

from compiler import pipeline
from compiler.autoscaler import run as autoscaler_run
from compiler.charts import helm_template, vendor, vendored
from compiler.charts.package import CRD_CACHE, read_chart_bytes
from compiler.charts.pins import ChartPin
from compiler.project.paths import Project

SHARED_DIR = (REPO_ROOT.parent / "shared").resolve()
CHARTS_DIR = SHARED_DIR / "kuberay" / "charts"
CHART_VERSIONS = ("1.5.2", "1.6.2", "1.7.0")

if not (CHARTS_DIR / "index.yaml").exists():
    raise RuntimeError(f"tests need the upstream chart repository at {CHARTS_DIR} (../shared beside the checkout)")
os.environ.setdefault("KRC_CHART_REPOSITORY", CHARTS_DIR.as_uri())
# Ray's autoscaling-config generators live beside the checkout (`make ray-generators`), not in project copies
RAY_ENVS = REPO_ROOT / ".venv-ray"
RAY_VERSION = "2.58.0"  # the Ray version the environments name
if not (RAY_ENVS / RAY_VERSION / "bin" / "python").exists() and "KRC_RAY_ENVS" not in os.environ:
    raise RuntimeError(f"tests need Ray {RAY_VERSION}'s autoscaler config generator in {RAY_ENVS}: "
                       "run make ray-generators")
os.environ.setdefault("KRC_RAY_ENVS", str(RAY_ENVS))
# krc's cache (compiled environments, Helm output, Ray's and CUE's answers, parsed CRDs) is the test run's own,
# never the user's: one folder per run, made here in the main pytest process and inherited by its xdist workers
# (krc writes its cache files atomically, and every entry is content-addressed), so a test after the first finds
# what is unchanged warm. A pytest run that a test starts (tests/test_fixture_independence.py) inherits it too.
# The process that made the folder removes it when the run ends.
# Likewise the folder where the session fixtures build what every test process reads (tests/run_shared.py).
TEST_CACHE_VARIABLE = "KRC_TEST_CACHE_DIR"
_OWN_FOLDERS = [variable for variable, prefix in ((TEST_CACHE_VARIABLE, "krc-test-cache-"),
                                                  (run_shared.SHARED_VARIABLE, "krc-test-shared-"))
                if run_shared.run_folder(variable, prefix)]
os.environ["KRC_CACHE_DIR"] = os.environ[TEST_CACHE_VARIABLE]


def pytest_sessionfinish(session: pytest.Session) -> None:
    worker_exit.SESSION_ENDED.append(True)  # a test process may now leave without its teardown (worker_exit.py)


def pytest_unconfigure(config: pytest.Config) -> None:
    for variable in _OWN_FOLDERS:
        shutil.rmtree(os.environ[variable], ignore_errors=True)


# One compiling process per command: pytest-xdist already runs a test process per core, and a pool's spawned
# workers each import krc afresh (about a second of CPU each). The parallel path has tests of its own, which ask
# for two workers explicitly (tests/test_compile_cache.py).
os.environ["KRC_JOBS"] = "1"
# A test process runs the CUE engine and Ray's generator test after test, but most tests find their answers in the
# run's cache, so minutes may pass between two that need a helper: an idle helper waits up to ten minutes for the
# next request (krc's default, 2 s, suits one command), so each test process starts each helper about once rather
# than once per test that needs it (0.5 s and 1.6 s of CPU per start; with 15 s, the suite started 45 of them). A
# helper still ends with the test process that started it (its request pipe closes). Tests of the idle exit set
# their own.
os.environ.setdefault("KRC_HELPER_IDLE_SECONDS", "600")


# Property tests (hypothesis): `make test` tries 40 examples per property (the costly ones, each a render, a quarter
# of that; see their modules), a search deep enough to catch a regression in the round trips while the suite stays
# fast. `pytest --hypothesis-profile=thorough` searches 25 times deeper. No example database: tests write nothing
# into the checkout, and a failure prints the example that reproduces it.
settings.register_profile("suite", max_examples=40, deadline=None, database=None)
settings.register_profile("thorough", max_examples=1000, deadline=None, database=None)
settings.load_profile("suite")  # the hypothesis plugin loads --hypothesis-profile's choice after this


# The slowest tests (seconds each: CUE engine runs, krc processes, a nested pytest run), started first: pytest-xdist
# hands tests out in collection order, so a slow test collected last would run alone at the end while the other
# worker idles. Node ids (or their start); a name no longer here is simply not moved. Measure with --durations=30.
# The first two render the fixture project as it is; the fixture-independence test, handed out after them, runs
# them again in a pytest of its own, which finds what they compiled in the run's shared cache.
SLOW_FIRST = (
    "tests/test_cli.py::test_render_check_and_golden_round_trip",
    "tests/test_pipeline.py::test_golden_accept_and_mismatch_listing",
    "tests/test_compile_cache.py::test_policy_batches_find_what_one_engine_run_finds",
    "tests/review/test_review_budget.py::",
    "tests/test_fixture_independence.py::test_editing_the_shipped_environments_leaves_the_tests_green",
    "tests/test_compile_cache.py::test_parallel_output_is_byte_identical_to_sequential",
    "tests/test_policies_after.py::",
    "tests/review/test_review_checks.py::test_a_policy_violation_blocks_golden_and_leads_the_review",
    "tests/argocd/test_argocd_generate.py::test_generate_matches_render_for_every_environment",
    "tests/argocd/test_argocd_generate.py::test_concurrent_runs_match_sequential_runs",
    "tests/test_compile_cache.py::test_policy_results_come_from_the_cache_without_starting_the_engine",
    "tests/security/test_writes.py::test_concurrent_runs_serialize_and_agree",
    "tests/security/test_properties.py::test_near_valid_documents_render_deterministically",
    "tests/crddiff/test_crddiff_charts.py::test_every_source_form_gives_the_same_changes",
    "tests/test_provenance.py::",
    "tests/test_lint_results_cache.py::",
    "tests/autoscaler/test_generator_agreement.py::test_every_upstream_sample_agrees_with_the_generator",
)


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection made (test modules, their parameters, krc's modules) lives as long as the test process:
    out of the collector's sight, a full collection between tests walks only what the tests make."""
    gc.freeze()


# A test process keeps what its tests parse (CRDs, schemas, charts) for its whole run, and Python's default
# thresholds (700, 10, 10) walk it about 2,000 times per process: 1.2-2.7 CPU-s per test process. Collecting after
# 20,000 allocations, older generations more rarely, takes 35-65 collections and 0.5-1.0 CPU-s (measured on the
# suite's two test processes); cycles are still collected, a little later. krc's own processes keep the defaults.
gc.set_threshold(20_000, 20, 50)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        return next((i for i, start in enumerate(SLOW_FIRST) if item.nodeid.startswith(start)), len(SLOW_FIRST))

    items.sort(key=rank)  # stable: the others keep their order


def _tree_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


@pytest.fixture(scope="session", autouse=True)
def golden_is_never_written():
    """No test may change the committed golden/ files (the shipped ones and the fixture project's)."""
    folders = (REPO_ROOT / "golden", FIXTURE_PROJECT / "golden", FIXTURE_PROJECT / "environments")
    before = [_tree_digest(folder) for folder in folders]
    yield
    assert [_tree_digest(folder) for folder in folders] == before, "a test wrote into a committed golden/ folder"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    return SHARED_DIR


@pytest.fixture(scope="session")
def charts_dir() -> Path:
    return CHARTS_DIR


@pytest.fixture(scope="session")
def vendor_cache() -> Path:
    """A vendor/ folder with every upstream chart version, filled once per run through file://."""

    def build(folder: Path) -> None:
        # the committed lock carries the Helm pin besides the charts' digests
        shutil.copy(REPO_ROOT / "vendor" / vendored.LOCK_NAME, folder / vendored.LOCK_NAME)
        pins = [ChartPin("kuberay-operator", v, CHARTS_DIR.as_uri()) for v in CHART_VERSIONS]
        vendor.vendor(folder, pins)

    return run_shared.once("vendor", build)


@pytest.fixture(scope="session")
def parsed_charts_cache(vendor_cache: Path) -> Path:
    """krc's cache as after its first reads of the vendored charts (every chart's CRDs parsed, nothing
    compiled): tests that need a cache of their own start from a copy, instead of parsing megabytes
    of CRD YAML each."""

    def build(folder: Path) -> None:
        # krc keeps a chart's parsed CRDs as one entry named by the archive's digest: read each chart through the
        # run's own cache (where vendoring already parsed it) and take its entry from there
        run_cache = Path(os.environ["KRC_CACHE_DIR"])
        for archive in sorted((vendor_cache / "charts").glob("*.tgz")):
            data = archive.read_bytes()
            read_chart_bytes(data, str(archive))
            digest = hashlib.sha256(data).hexdigest()
            target = Path(CRD_CACHE.entry_path(digest, folder))
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            shutil.copy2(CRD_CACHE.entry_path(digest, run_cache), target)

    return run_shared.once("parsed-charts-cache", build)


# What krc keeps of the programs it runs for an environment, by folder of its cache: Helm's output and the answers
# of Ray's autoscaler-config generator (about 1.6 CPU-s to start), each named by the digest of what was asked
TOOL_ANSWERS = (helm_template.CACHE.name, autoscaler_run.CACHE.name)


@pytest.fixture(scope="session")
def tool_answers_cache(tmp_path_factory: pytest.TempPathFactory, vendor_cache: Path,
                       parsed_charts_cache: Path) -> Path:
    """parsed_charts_cache, plus what Helm and Ray's generator answered for the fixture project's environments as
    they are: gathered once per run, by a lint in a scratch cache, of which only those answers are kept."""

    def build(folder: Path) -> None:
        shutil.copytree(parsed_charts_cache, folder, dirs_exist_ok=True)
        scratch = tmp_path_factory.mktemp("scratch-cache")
        shutil.copytree(parsed_charts_cache, scratch, dirs_exist_ok=True)
        project = copy_project(tmp_path_factory.mktemp("tool-answers") / "project", vendor_cache)
        shutil.rmtree(project.policies_dir)  # the CUE engine's answers are not kept: the policy tests count its runs
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("KRC_CACHE_DIR", str(scratch))
            # lint: it renders (Helm) and checks every RayCluster as the autoscaler sees it (Ray's generator)
            pipeline.lint_environments(project, (), run=pipeline.RunOptions(workers=1))
        for part in TOOL_ANSWERS:
            shutil.copytree(scratch / part, folder / part)

    return run_shared.once("tool-answers-cache", build)


@pytest.fixture
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tool_answers_cache: Path) -> Path:
    """A krc cache of the test's own (KRC_CACHE_DIR): the charts' CRDs parsed, Helm's and Ray's generator's answers
    for the fixture project as it is, but nothing krc compiled, linted or reviewed: for tests that count what a run
    compiles, reviews or reads from the cache."""
    folder = tmp_path / "cache"
    shutil.copytree(tool_answers_cache, folder)
    monkeypatch.setenv("KRC_CACHE_DIR", str(folder))
    return folder


@pytest.fixture(scope="session")
def fixture_project() -> Path:
    """The tests' own project data (read only)."""
    return FIXTURE_PROJECT


@pytest.fixture
def project(tmp_path: Path, vendor_cache: Path) -> Project:
    """A private copy of the fixture project with the repository's templates and policies, charts vendored."""
    return copy_project(tmp_path / "project", vendor_cache)


@pytest.fixture
def project_without_policies(project: Project) -> Project:
    """The project copy without policies/: for lint and review tests that are not about policies, so they do not
    start the CUE engine (seconds of CPU per run); the policy tests, tests/lint/test_lint_policies.py and
    tests/review/test_review_checks.py cover that path. Tests taking another fixture built on `project` (the
    review's `accepted`) ask for it with `@pytest.mark.usefixtures("project_without_policies")`."""
    shutil.rmtree(project.policies_dir)
    return project

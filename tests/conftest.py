"""Shared fixtures: the upstream material beside the checkout, a vendored chart cache, a project copy.

The tests' project is their own: `tests/fixtures/project/` holds its environments/ and golden/, so a team editing
the shipped environments/ (and accepting golden/) never breaks the tool's tests; the shipped files are checked by
`make render` (krc check). Templates, policies and deploy/ are the tool's code and come from the repository.
Tests never write into the real repository: a project fixture is a copy in tmp_path, and a guard fails the
session if golden/ (the shipped one or the fixture's) changed.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from project_support import FIXTURE_PROJECT, REPO_ROOT, copy_project

from compiler.charts import vendor, vendored
from compiler.charts.package import crd_cache_file, read_chart_bytes
from compiler.project import Project

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
TEST_CACHE_VARIABLE = "KRC_TEST_CACHE_DIR"
_OWN_CACHE = not os.environ.get(TEST_CACHE_VARIABLE)
if _OWN_CACHE:
    os.environ[TEST_CACHE_VARIABLE] = tempfile.mkdtemp(prefix="krc-test-cache-")
os.environ["KRC_CACHE_DIR"] = os.environ[TEST_CACHE_VARIABLE]


def pytest_unconfigure(config: pytest.Config) -> None:
    if _OWN_CACHE:
        shutil.rmtree(os.environ[TEST_CACHE_VARIABLE], ignore_errors=True)


# One compiling process per command: pytest-xdist already runs a test process per core, and a pool's spawned
# workers each import krc afresh (about a second of CPU each). The parallel path has tests of its own, which ask
# for two workers explicitly (tests/test_compile_cache.py).
os.environ["KRC_JOBS"] = "1"
# A test process runs the CUE engine and Ray's generator test after test: an idle helper process waits this long for
# the next request (krc's default, 2 s, suits one command), so most tests find one up rather than start one (0.5 s
# and 0.9 s of CPU each). Tests of the idle exit set their own.
os.environ.setdefault("KRC_HELPER_IDLE_SECONDS", "15")


# The slowest tests (seconds each: CUE engine runs, krc processes, a nested pytest run), started first: pytest-xdist
# hands tests out in collection order, so a slow test collected last would run alone at the end while the other
# worker idles. Node ids (or their start); a name no longer here is simply not moved. Measure with --durations=30.
# The first two run the CUE engine over the fixture project as it is; the fixture-independence test, handed out
# after them, runs them again in a pytest of its own, which finds their policy results in the run's shared cache.
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
def vendor_cache(tmp_path_factory) -> Path:
    """A vendor/ folder with every upstream chart version, filled once per session through file://."""
    folder = tmp_path_factory.mktemp("vendor")
    # the committed lock carries the Helm pin besides the charts' digests
    shutil.copy(REPO_ROOT / "vendor" / vendored.LOCK_NAME, folder / vendored.LOCK_NAME)
    pins = [vendor.ChartPin("kuberay-operator", v, CHARTS_DIR.as_uri()) for v in CHART_VERSIONS]
    vendor.vendor(folder, pins)
    return folder


@pytest.fixture(scope="session")
def parsed_charts_cache(tmp_path_factory: pytest.TempPathFactory, vendor_cache: Path) -> Path:
    """krc's cache as after its first reads of the vendored charts (every chart's CRDs parsed, nothing compiled):
    tests that need a cache of their own start from a copy, instead of parsing megabytes of CRD YAML each."""
    folder = tmp_path_factory.mktemp("parsed-charts-cache")
    # krc keeps a chart's parsed CRDs as one entry named by the archive's digest: read each chart through the run's
    # own cache (where vendoring already parsed it, in this worker or another) and take its entry from there
    run_cache = Path(os.environ["KRC_CACHE_DIR"])
    for archive in sorted((vendor_cache / "charts").glob("*.tgz")):
        data = archive.read_bytes()
        read_chart_bytes(data, str(archive))
        entry = crd_cache_file(hashlib.sha256(data).hexdigest()).name
        shutil.copy2(run_cache / entry, folder / entry)
    return folder


@pytest.fixture
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parsed_charts_cache: Path) -> Path:
    """A krc cache of the test's own (KRC_CACHE_DIR), with the charts' CRDs parsed but nothing compiled: for tests
    that count what a run compiles, reviews or reads from the cache."""
    folder = tmp_path / "cache"
    shutil.copytree(parsed_charts_cache, folder)
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

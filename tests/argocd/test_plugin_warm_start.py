"""The plugin's warm `generate`: answered from the compile cache by a process that loads none of the compiling
stack (templates engines, schemas, rules, CUE), with the same bytes and the same refusals as a compiling run."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from argocd_sidecar import argocd_environ, parameters, run, run_sidecar

from compiler import pipeline
from compiler.charts import vendored
from compiler.project.paths import Project

# Modules a compiling run needs and a warm answer must not load: each costs start-up time on every request (the
# native clients bring threads, sockets and futures; the cache keys name the builds through native.binary alone).
COMPILING_STACK = ("compiler.render.templates", "compiler.rules", "compiler.validation", "compiler.lint",
                   "compiler.policy", "compiler.review", "compiler.engines", "compiler.environment.model",
                   "compiler.charts.repository", "compiler.native.client", "compiler.native.kuberay", "jinja2",
                   "jsonschema", "_gojsonnet")

# The console script's own start, then the names of the modules loaded once the command has finished.
PROBE = """
import sys
from compiler.cli import main
try:
    main(["argocd", "generate", *sys.argv[1:]], prog_name="krc")
except SystemExit as exit:
    code = exit.code
sys.stderr.write("\\nMODULES " + " ".join(sorted(sys.modules)) + "\\n")
sys.exit(code)
"""


def _probe(app_dir: Path, environ: dict, *args: str) -> tuple[subprocess.CompletedProcess[bytes], set[str]]:
    result = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=app_dir, env=environ, capture_output=True,
                            check=False)
    modules = result.stderr.decode().rpartition("\nMODULES ")[2].split()
    return result, set(modules)


def _loaded(modules: set[str], name: str) -> bool:
    return name in modules or any(m.startswith(name + ".") for m in modules)


def test_a_warm_generate_loads_none_of_the_compiling_stack_and_prints_the_same_bytes(app_dir: Path,
                                                                                       cache_dir: Path):
    environ = argocd_environ(cache_dir, parameters("prod-eks-gpu"))
    cold = run(app_dir, environ)  # compiled in this process: what the probe must not load is loaded here already
    assert cold.returncode == 0, cold.stderr

    warm, warm_modules = _probe(app_dir, environ)
    assert warm.returncode == 0, warm.stderr
    assert warm.stdout == cold.stdout and b"CustomResourceDefinition" in warm.stdout
    assert [m for m in COMPILING_STACK if _loaded(warm_modules, m)] == []
    # the real console script agrees, byte for byte
    assert run_sidecar(app_dir, environ).stdout == cold.stdout


def test_a_request_without_crds_does_not_read_the_chart(project: Project, monkeypatch: pytest.MonkeyPatch):
    options = {"environment": "dev", "crds": "exclude"}
    compiled = pipeline.argocd_generate(project, {}, options)  # fills the cache

    def unreadable(*_: object) -> None:
        raise AssertionError("the chart archive was read for a request without CRDs")

    monkeypatch.setattr(vendored, "load_vendored_chart", unreadable)
    monkeypatch.setattr(vendored, "load_vendored_crds", unreadable)
    warm = pipeline.generate_from_cache(project, {}, options)
    assert warm is not None and warm.stream == compiled.stream and "kind: RayCluster" in warm.stream
    assert "CustomResourceDefinition" not in warm.stream


def test_a_cached_error_level_finding_still_fails_with_nothing_on_stdout(app_dir: Path, cache_dir: Path):
    # dev is declared CPU-only: a GPU worker group is an error-level finding, though it renders fine
    (app_dir / "environments" / "dev-gpu.yaml").write_text(
        "extends: dev\nclusters:\n  - name: ray-cpu-demo\n    workerGroups:\n      - name: gpu\n        gpu: 1\n")
    environ = argocd_environ(cache_dir, parameters("dev-gpu"))
    compiled = run(app_dir, environ)  # compiled (and cached with its findings) in this process
    assert compiled.returncode == 2 and compiled.stdout == b""
    result, modules = _probe(app_dir, environ)  # then answered from the cache
    assert result.returncode == 2 and result.stdout == b""
    assert b"resources/gpu-in-cpu-only-environment" in result.stderr
    assert "resources/gpu-in-cpu-only-environment" in compiled.stderr
    assert not _loaded(modules, "compiler.render.templates")


def test_a_changed_layer_is_compiled_again(app_dir: Path, cache_dir: Path):
    environ = argocd_environ(cache_dir, parameters("dev", crds="exclude"))
    before = run(app_dir, environ)  # compiled and cached in this process
    assert before.returncode == 0, before.stderr
    base = app_dir / "environments" / "base.yaml"
    base.write_text(base.read_text().replace("namespace: kuberay-system", "namespace: kuberay-operators", 1))
    after, modules = _probe(app_dir, environ)
    assert after.returncode == 0 and b"kuberay-operators" in after.stdout and after.stdout != before.stdout
    # the cached result was not believed; this also shows the probe sees what a compiling run loads
    assert _loaded(modules, "compiler.render.templates")

"""What a command loads is what it needs: `krc render` and `krc check` do not load the review's comparison and
formatters (compiler.review loads its names when first used), and no command whose environments and objects are
valid loads jsonschema (only their errors need it). Checked in a fresh interpreter, as a command starts."""
from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest

from compiler.project.paths import Project

# loaded only to report an error: a command over valid input leaves them alone
ERROR_PATH_PACKAGES = ("jsonschema", "referencing", "kubernetes_validate", "packaging")
PACKAGE = Path(__file__).resolve().parents[1] / "compiler"
RUN_COMMAND = """
import sys
from click.testing import CliRunner
from compiler.cli import main
result = CliRunner().invoke(main, sys.argv[1:])
print(result.exit_code, *sorted(m for m in sys.modules if m.split(".")[0] in {names!r}))
"""


def command_loads(project: Project, *args: str, packages: Iterable[str] = ERROR_PATH_PACKAGES) \
        -> tuple[int, set[str]]:
    """The exit code of `krc --project PROJECT ARGS...` in a fresh interpreter, and the modules of `packages` it
    loaded."""
    done = subprocess.run([sys.executable, "-c", RUN_COMMAND.format(names=set(packages)), "--project",
                           str(project.root), *args], capture_output=True, text=True, check=True)
    code, *modules = done.stdout.split()
    return int(code), set(modules)


def loaded_after(*modules: str) -> set[str]:
    code = "import sys\n" + "".join(f"import {m}\n" for m in modules) + \
        "print('\\n'.join(m for m in sys.modules if m.startswith('compiler.')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(done.stdout.split())


def test_render_and_check_do_not_load_the_reviews_comparison_or_formatters() -> None:
    loaded = loaded_after("compiler.cli.render_commands", "compiler.pipeline.golden")
    assert "compiler.pipeline.golden" in loaded and "compiler.review.golden_source" in loaded
    heavy = {"compiler.review.compare", "compiler.review.formats", "compiler.review.format_html",
             "compiler.review.format_markdown", "compiler.review.format_text", "compiler.review.format_json",
             "compiler.review.approve", "compiler.review.report_files", "compiler.pipeline.review_batch",
             "compiler.review.model", "compiler.review.crdgate"}
    assert loaded & heavy == set()


def test_the_compiling_modules_leave_the_process_pool_to_a_command_that_starts_one(project: Project) -> None:
    """multiprocessing and the process pool load when a pool starts (pipeline.worker_pool): a command compiling a
    few environments in one process (most pull requests) starts none."""
    loaded = loaded_after("compiler.cli.render_commands", "compiler.pipeline.golden", "compiler.pipeline.jobs",
                          "compiler.pipeline.workers_ahead")
    assert "compiler.pipeline.worker_pool" not in loaded
    code, modules = command_loads(project, "render", "dev", packages={"multiprocessing", "concurrent"})
    assert code == 0 and "multiprocessing" not in modules and "concurrent.futures.process" not in modules


# What only `krc lint`, `krc policy`, `krc golden`, `krc vendor` and the plugin need: how policies are evaluated
# and given their inputs, Ray's generators, the plugin's request and output, chart downloads, files named on the
# command line. A compile checks an environment's Argo CD objects and names a policy run in its context, and
# importing these with that was about 25 ms of a one-environment render's start.
NOT_FOR_RENDER = {"compiler.policy.evaluate", "compiler.policy.engine", "compiler.policy.inputs",
                  "compiler.pipeline.policies_after", "compiler.pipeline.lint_batch", "compiler.pipeline.linting",
                  "compiler.autoscaler", "compiler.autoscaler.run", "compiler.argocd.generate",
                  "compiler.argocd.parameters", "compiler.charts.vendor", "compiler.charts.repository",
                  "compiler.lint.manifest_files"}


def test_a_render_compiles_without_loading_what_lint_policies_downloads_and_the_plugin_need(project: Project) -> None:
    def loads(*args: str) -> set[str]:
        code, modules = command_loads(project, *args, packages={"compiler", "zipfile", "importlib"})
        assert code in (0, 1)
        return modules

    # each is a module krc has: a name renamed away would make the check below pass whatever a render loads
    assert [name for name in sorted(NOT_FOR_RENDER) if importlib.util.find_spec(name) is None] == []
    rendered = loads("render", "--no-cache", "dev")
    assert "compiler.pipeline.context" in rendered and "compiler.argocd.validation" in rendered
    assert rendered & NOT_FOR_RENDER == set()
    # the environment schema is read beside the package, without importlib.resources' zip readers
    assert "compiler.environment.schema" in rendered and not rendered & {"zipfile", "importlib.resources"}
    linted = loads("lint", "--no-cache", "dev")  # the same compile for lint, which needs them
    assert {"compiler.policy.evaluate", "compiler.pipeline.lint_batch", "compiler.autoscaler"} <= linted


def test_the_diff_command_loads_what_it_formats_with() -> None:
    """markdown-it (30-40 ms to import) and the HTML page's module load only for a page: `--format html` or
    `--output html=...`."""
    loaded = loaded_after("compiler.cli.review_commands")
    assert "compiler.review.formats" in loaded and "compiler.review.format_html" not in loaded


@pytest.mark.usefixtures("project_without_policies")  # not about policies: no CUE engine run
def test_markdown_it_loads_for_an_html_review_only(project: Project) -> None:
    def loads(*args: str) -> set[str]:
        code, modules = command_loads(project, "diff", *args, packages={"markdown_it"})
        assert code in (0, 1)
        return modules

    assert loads() == set() and loads("--format", "markdown") == set()
    assert "markdown_it" in loads("--format", "html")




def test_commands_over_valid_environments_do_not_load_jsonschema(project: Project) -> None:
    """Their environment files and built-in objects pass the compiled checks (quick_validity); jsonschema and
    kubernetes-validate's code load only to report errors. Nor does `packaging` load: the rules' operator versions
    are compared by krc (rules/support/versions.py), and its specifier grammar took 20-37 ms to compile."""
    for args in (["render"], ["lint"], ["check"]):
        code, modules = command_loads(project, *args)
        assert code in (0, 1) and modules == set(), args


def test_an_invalid_environment_loads_jsonschema_for_its_errors(project: Project) -> None:
    layer = project.environment_file("dev")
    layer.write_text(layer.read_text(encoding="utf-8") + "unknownSetting: 1\n", encoding="utf-8")
    code, modules = command_loads(project, "render", "dev")
    assert code == 2 and {"jsonschema", "referencing"} <= modules


@pytest.mark.parametrize("package", ["compiler.review", "compiler.pipeline", "compiler.environment",
                                     "compiler.validation", "compiler.argocd", "compiler.policy", "compiler.lint"])
def test_a_lazily_exported_name_is_no_submodules_name(package: str) -> None:
    """Importing a submodule sets the package's attribute of that name to the module, which would then shadow an
    exported function of the same name (PEP 562's __getattr__ is never asked)."""
    exports = importlib.import_module(package)._EXPORTS
    folder = PACKAGE / package.split(".", 1)[1]
    assert [name for name in exports if (folder / f"{name}.py").exists() or (folder / name).is_dir()] == []

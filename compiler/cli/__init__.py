"""The command line: parse options, call one core function, report, choose the exit code.

Exit codes everywhere: 0 fine, 1 findings or differences, 2 bad input or a failing environment (disk, network,
permissions; nothing written), 3 an internal error. No traceback is printed unless KRC_DEBUG=1 (`edge.py`).
Commands are listed by `krc --help` in the order of a working day (support.WORKFLOW_ORDER). Each command module
holds thin commands; this module makes the `krc` group and names every command in it, explicitly, by where it is
defined: a command's module is imported only when that command runs (support.WorkflowGroup), so the plugin's
`krc argocd generate` starts in a fraction of the time a command importing everything takes.
"""
from __future__ import annotations

import gc
import sys

import click

from ..diagnostics.report_format import COLOR_CHOICES
from ..settings import lifetime
from ..settings.collector import collect_less
from . import stop_signals
from .edge import CONTEXT, ErrorEdge, flush_output
from .support import print_versions

# command name -> "module:attribute" (relative to this package)
COMMANDS = {
    "init": ".project_commands:init_command", "envs": ".project_commands:envs_command",
    "show": ".project_commands:show_command", "explain": ".project_commands:explain_command",
    "autoscaler": ".project_commands:autoscaler_command", "rules": ".project_commands:rules_command",
    "vendor": ".render_commands:vendor_command", "render": ".render_commands:render_command",
    "golden": ".render_commands:golden_command", "check": ".render_commands:check_command",
    "diff": ".review_commands:diff_command", "approve": ".review_commands:approve_command",
    "lint": ".lint_commands:lint_command", "policy": ".lint_commands:policy_command",
    "crd-diff": ".lint_commands:crd_diff_command", "argocd": ".argocd_commands:argocd_group",
}


@click.group(cls=ErrorEdge, context_settings=CONTEXT, lazy=COMMANDS)
@click.option("--project", type=click.Path(file_okay=False), help="Project root (default: found from the cwd).")
@click.option("--color", type=click.Choice(COLOR_CHOICES), default="auto", show_default=True,
              help="Colour: auto (on a terminal, unless NO_COLOR is set; FORCE_COLOR forces it), always, never.")
@click.option("--version", is_flag=True, expose_value=False, is_eager=False, callback=print_versions,
              help="Show the versions of krc, Jinja2, Jsonnet, Helm and the CUE engine, and exit.")
def main(project: str | None, color: str) -> None:
    """krc: compile KubeRay environments into manifests, Helm values and CRDs; validate, lint and diff them.

    \b
    The daily loop:
      edit environments/<env>.yaml
      krc diff            # what changes, object by object
      krc golden          # accept the render into golden/
      git commit          # golden/ is reviewed with the change

    \b
    Shell completion (environment names, rule ids, formats):
      eval "$(_KRC_COMPLETE=bash_source krc)"    # zsh: zsh_source, fish: fish_source
    """


# tarfile's extraction filters (`filter="data"`, how chart archives are unpacked) came with 3.11.4; pyproject.toml's
# requires-python says the same, and tests hold the two together
PYTHON_FLOOR = (3, 11, 4)


def python_too_old(version: tuple[int, ...]) -> str | None:
    """The one line krc prints instead of starting on a Python older than the floor, else None."""
    if tuple(version[:3]) >= PYTHON_FLOOR:
        return None
    need, have = ".".join(map(str, PYTHON_FLOOR)), ".".join(map(str, version[:3]))
    return (f"krc: error krc needs Python {need} or newer (tarfile's extraction filters), this is Python {have}; "
            f"install krc with a newer Python")


def run() -> None:
    """The `krc` executable: the command, then an exit that skips the collector. A command over hundreds of
    environments leaves a heap of hundreds of thousands of objects, and Python's shutdown runs its cycle collector
    over all of them only to free memory the system takes back anyway: 0.15-0.25 s after `krc diff` of 500
    environments. Frozen, they are left to the system; everything else about the exit is as usual (exit handlers
    stop helpers and remove temporary folders, output is flushed). In-process callers (the tests) call `main`."""
    too_old = python_too_old(sys.version_info[:3])
    if too_old:
        print(too_old, file=sys.stderr)
        sys.exit(2)
    stop_signals.install()
    collect_less()
    lifetime.ends_with_command()
    try:
        main()  # exits (click's standalone mode)
    finally:
        gc.freeze()
        flush_output()


__all__ = ["PYTHON_FLOOR", "ErrorEdge", "main", "python_too_old", "run"]

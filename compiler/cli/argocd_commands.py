"""`krc argocd`: the config-management plugin's commands (generate, init, validate).
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import click

from .. import argocd, pipeline
from .edge import CONTEXT
from .plugin_edge import plugin_command
from .support import (
    current_project,
)


@click.group("argocd", context_settings=CONTEXT,
            short_help="The Argo CD config-management plugin (generate, init, validate).")
def argocd_group() -> None:
    """Argo CD config-management plugin commands (see deploy/argocd/README.md)."""


def _argocd_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Request options; each overrides ARGOCD_APP_PARAMETERS, PARAM_* and ARGOCD_ENV_KRC_* (the plugin inputs)."""
    for option in reversed([
        click.option("--environment", help="Environment to render (plugin parameter 'environment')."),
        click.option("--crds", type=click.Choice(["include", "exclude", "only"]),
                     help="The chart's CRDs: include (default), exclude, only."),
        click.option("--applications", type=click.Choice(["include", "exclude", "only"]),
                     help="The environment's child Argo CD Applications: include, exclude (default), only."),
        click.option("--operator", type=click.Choice(["include", "exclude", "only"]),
                     help="The operator chart's objects as the pinned Helm renders them: include (default), exclude, "
                     "only."),
        click.option("--cluster", help="Retarget the child Applications at this Argo CD cluster name."),
    ]):
        command = option(command)
    return command


@argocd_group.command("generate")
@_argocd_options
@click.option("--argocd-crds", type=click.Path(exists=True), help="Argo CD CRDs to validate Applications against "
              "(default: the environment's argocd.crds).")
@click.option("--no-cache", is_flag=True, help="Compile again; neither read nor write the compile cache.")
@plugin_command("generate")
def argocd_generate_command(argocd_crds: str | None, no_cache: bool, **options: str | None) -> None:
    """Print one environment's objects as one YAML stream; on any error print nothing, one line on stderr, and
    exit 2."""
    project, run = current_project(), pipeline.RunOptions(cache=not no_cache)
    # a warm answer imports nothing of the compiling stack; a miss compiles (and fills the cache)
    generated = pipeline.generate_from_cache(project, os.environ, options, argocd_crds, run) \
        or pipeline.argocd_generate(project, os.environ, options, argocd_crds, run)
    for problem in generated.warnings:
        click.echo(problem.one_line(), err=True)
    sys.stdout.write(generated.stream)  # everything at once, only after everything succeeded
    sys.stdout.flush()
    click.echo(argocd.describe(generated), err=True)


@argocd_group.command("init")
@_argocd_options
@plugin_command("init")
def argocd_init_command(**options: str | None) -> None:
    """Vendor the charts 'generate' needs (the chosen environment's, else all); cached charts are kept."""
    for result in pipeline.argocd_init(current_project(), os.environ, options):
        state = "downloaded" if result.downloaded else "cached"
        click.echo(f"{result.pin.name} {result.pin.version} sha256:{result.digest} ({state})", err=True)


@argocd_group.command("validate")
@click.argument("environments", nargs=-1)
@click.option("--crds", "crds_path", type=click.Path(exists=True), help="Argo CD CRDs (file or directory; default: "
              "each environment's argocd.crds).")
def argocd_validate_command(environments: tuple[str, ...], crds_path: str | None) -> None:
    """Check environments' Argo CD Applications against Argo CD's CRDs; exit 1 on any error."""
    problems = pipeline.validate_argocd(current_project(), environments, crds_path)
    for problem in problems:
        click.echo(problem.one_line())
    sys.exit(1 if any(p.severity == "error" for p in problems) else 0)

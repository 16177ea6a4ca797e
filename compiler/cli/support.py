"""The command line's terminal manners, kept apart so the command modules stay lists of thin commands: colour,
problem blocks, progress, shell completion, help in workflow order, `--version`."""
from __future__ import annotations

import contextlib
import importlib
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from .. import pipeline
from ..diagnostics.problems import KrcError, Problem
from ..diagnostics.report_format import Style, choose_style, format_problems, progress, source_reader
from ..project.paths import Project, find_project

# `krc --help` lists commands in the order of a working day, not alphabetically.
WORKFLOW_ORDER = ("init", "envs", "explain", "render", "show", "diff", "golden", "check", "lint", "policy",
                  "autoscaler", "rules", "vendor", "crd-diff", "argocd")


class WorkflowGroup(click.Group):
    """Commands listed in the order of a working day; a command given as `module:attribute` (`lazy`) is imported
    when it runs or is listed, not before (click's documented lazy loading): Argo CD runs `krc argocd generate` for
    every manifest request, and it should not pay for importing the render, lint and review stacks."""

    def __init__(self, *args: Any, lazy: Mapping[str, str] | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        names = set(self.commands) | set(self.lazy)
        known = [name for name in WORKFLOW_ORDER if name in names]
        return known + sorted(names - set(known))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            module, _, attribute = self.lazy[cmd_name].partition(":")
            command = getattr(importlib.import_module(module, __package__), attribute)
            if not isinstance(command, click.Command):
                raise TypeError(f"{self.lazy[cmd_name]} is not a click command")
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)


def project_or_none(ctx: click.Context | None = None) -> Project | None:
    """The project of --project or the working directory, or None outside any project."""
    ctx = ctx or click.get_current_context(silent=True)
    root = ctx.find_root().params.get("project") if ctx else None
    try:
        return find_project(Path(root) if root else Path.cwd())
    except KrcError:
        return None


def current_project() -> Project:
    """The project named by --project, else the one around the working directory."""
    root = click.get_current_context().find_root().params.get("project")
    return find_project(Path(root) if root else Path.cwd())


def style(err: bool = False) -> Style:
    """Colour for stdout (or stderr): --color, then NO_COLOR / FORCE_COLOR, then whether it is a terminal."""
    ctx = click.get_current_context(silent=True)
    choice = (ctx.find_root().params.get("color") if ctx else None) or "auto"
    return choose_style(choice, (sys.stderr if err else sys.stdout).isatty(), os.environ)


def show_problems(problems: Sequence[Problem], err: bool = True) -> None:
    """Problems as compiler-style blocks: location, message, the source line with a caret, the fix."""
    project = project_or_none()
    base = project.root if project else Path.cwd()
    chosen = style(err)
    # click strips escape codes from non-terminals unless told: the choice was made above, with NO_COLOR & co.
    click.echo(format_problems(problems, chosen, source_reader(base)), nl=False, err=err, color=chosen.color)


@contextlib.contextmanager
def working(message: str) -> Iterator[None]:
    """A status line on stderr while something slow runs (only on a terminal)."""
    with progress(sys.stderr, message):
        yield


def complete_environments(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """Shell completion: the project's environment names."""
    project = project_or_none(ctx)
    return [n for n in (project.environment_names() if project else []) if n.startswith(incomplete)]


def complete_layers(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """Shell completion: every file an environment may extend."""
    project = project_or_none(ctx)
    return [n for n in (project.layer_names() if project else []) if n.startswith(incomplete)]


def print_versions(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    """`krc --version`: krc and the engines it uses here (eager: runs before any command)."""
    if not value or ctx.resilient_parsing:
        return
    root = ctx.params.get("project")
    try:
        project: Project | None = find_project(Path(root) if root else Path.cwd())
    except KrcError:
        project = None
    for name, version in pipeline.versions(project):
        click.echo(f"{name:10} {version}")
    ctx.exit(0)


def complete_rules(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """Shell completion: lint rule ids and policy/<name> of the project's policies."""
    return [rid for rid, _, _ in pipeline.rule_list(project_or_none(ctx)) if rid.startswith(incomplete)]

"""`krc diff --output FORMAT=FILE`: a report written to a file the user names, anywhere they can write.

CI writes reports into temporary folders outside the checkout ($RUNNER_TEMP), so any folder will do. Inside the
project, a pull request could plant a link (`reports -> /home/runner/.ssh`) to make krc write elsewhere: there
every folder from the project's root down to the file must be a real folder. The file itself is written beside
its target and renamed over it, in a folder opened once without following a link: a link planted at the file's
own name is replaced, never followed, and a reader sees the old report or the new one, never a part.
Everything is checked before anything is compiled: bad input writes nothing.
"""
from __future__ import annotations

import os
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..diagnostics.problems import KrcError
from ..project.paths import Project


@dataclass(frozen=True)
class ReportTarget:
    format: str
    path: Path  # absolute, links not resolved
    shown: str  # as the user wrote it
    inside: bool = False  # in the project: its folder is opened without following a link


def _inside(project: Project, folder: Path) -> Path | None:
    """`folder` relative to the project's root when it lies inside it (as written, or once resolved)."""
    for root, candidate in ((project.root.absolute(), folder), (project.resolved_root, folder.resolve())):
        if candidate.is_relative_to(root):
            return candidate.relative_to(root)
    return None


def _check_folder(project: Project, option: str, folder: Path) -> bool:
    """Whether `folder` is inside the project, once checked."""
    if not folder.is_dir():
        raise KrcError(f"--output {option!r}: the folder {folder} does not exist; create it first (mkdir -p)")
    inside = _inside(project, folder)
    if inside is not None:
        current = project.resolved_root
        for part in inside.parts:
            current = current / part
            if current.is_symlink():
                shown = current.relative_to(project.resolved_root).as_posix()
                raise KrcError(f"--output {option!r}: {shown} is a symbolic link inside the project; krc writes "
                               "reports only through real folders there: write the report elsewhere (e.g. "
                               "$RUNNER_TEMP) or remove the link")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise KrcError(f"--output {option!r}: cannot write into {folder} (permission denied); choose a folder "
                       "you can write")
    return inside is not None


def report_targets(project: Project, options: Sequence[str], formats: Sequence[str],
                   cwd: Path | None = None) -> list[ReportTarget]:
    """Every `FORMAT=FILE` checked: a known format, a file name in an existing folder krc may write into."""
    targets = []
    for option in options:
        name, _, file = option.partition("=")
        if name not in formats or not file:
            raise KrcError(f"--output {option!r}: write FORMAT=FILE with FORMAT one of {', '.join(formats)}")
        path = Path(os.path.abspath(Path(cwd or Path.cwd()) / file))
        if file.endswith(("/", os.sep)) or (path.is_dir() and not path.is_symlink()):
            raise KrcError(f"--output {option!r}: {file} is a folder; name a file in it (e.g. {name}=review.{name})")
        inside = _check_folder(project, option, path.parent)
        targets.append(ReportTarget(name, path, file, inside))
    return targets


def write_report(target: ReportTarget, content: bytes) -> None:
    """The report beside its target, then renamed over it, inside the folder opened once without links."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
    # outside the project a link is the user's own ($TMPDIR often is one); inside, none may lead elsewhere
    where = target.path.parent if target.inside else target.path.parent.resolve()
    try:
        folder = os.open(where, flags | (getattr(os, "O_NOFOLLOW", 0) if target.inside else 0))
    except OSError as err:
        raise KrcError(f"cannot open {target.path.parent} to write {target.shown}: {err.strerror}; check that the "
                       "folder exists and you may write there, then run again") from None
    stage = f".{target.path.name}.new-{secrets.token_hex(6)}"
    try:
        handle = os.open(stage, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644,
                         dir_fd=folder)
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(content)
            os.replace(stage, target.path.name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            try:
                os.unlink(stage, dir_fd=folder)
            except OSError:
                pass
            raise
    except OSError as err:
        raise KrcError(f"cannot write {target.shown}: {err.strerror}; check the disk and permissions, then run "
                       "again") from None
    finally:
        os.close(folder)

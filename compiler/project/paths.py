"""Where things live in a krc project; every other module asks this one for paths."""
from __future__ import annotations

import difflib
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from ..diagnostics.problems import KrcError, Location, Problem, safe_text
from ..settings import limits

ENVIRONMENT_SUFFIX = ".yaml"
# base.yaml and files starting with '_' are layers to extend, not environments to render
LAYER_ONLY = frozenset({"base"})
# An environment's name becomes folder names, object names and labels: a Kubernetes DNS-1123 label. Layers to
# extend are the same, optionally after one '_'.
_LAYER_NAME = re.compile(r"^_?[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
MAX_NAME_LENGTH = 63
# Files that may sit in environments/ without being environments: editor and OS litter, a README.
_NOT_ENVIRONMENTS = re.compile(r"^(README\.md|\.(?!.*\.ya?ml$).*)$")


def printable(text: str) -> str:
    """Text as one line of output: control characters (a newline in a committed file name) escaped."""
    return text if text.isprintable() else text.encode("unicode_escape").decode("ascii")


def shown_name(text: str) -> str:
    """A name as a message can print it: control characters escaped, length bounded."""
    escaped = printable(text)
    return escaped if len(escaped) <= 80 else escaped[:77] + "..."


def layer_name_error(name: str) -> str | None:
    """Why `name` cannot name an environment or a layer, or None."""
    if len(name.lstrip("_")) > MAX_NAME_LENGTH or not _LAYER_NAME.fullmatch(name):
        return (f"'{shown_name(name)}' is not a valid environment name: names are Kubernetes DNS-1123 labels "
                f"(lower case letters, digits and '-', starting and ending with a letter or digit, at most "
                f"{MAX_NAME_LENGTH} characters), optionally after one '_' for a layer")
    return None


def read_confined(path: Path, root: Path, limit: limits.Limit, shown: str) -> bytes:
    """The bytes of a regular file that resolves inside `root`, at most `limit` of them.

    Symbolic links may point anywhere inside `root`; one that leaves it, a FIFO (which would block the read
    forever), a device or a folder is refused, naming `shown`.
    """
    return read_resolved(path.resolve(), root.resolve(), limit, shown)


def read_resolved(resolved: Path, root: Path, limit: limits.Limit, shown: str) -> bytes:
    """read_confined of paths already resolved: each resolve walks every component with a system call."""
    if not resolved.is_relative_to(root):
        raise KrcError(f"{shown} leads outside the project (to {resolved}); krc reads only files inside "
                       "the project: replace the link with the file", Location(shown))
    try:
        fd = os.open(resolved, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        raise KrcError(f"{shown} does not exist", Location(shown)) from None
    except OSError as err:
        raise KrcError(f"cannot read {shown}: {err.strerror}; check its permissions", Location(shown)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a folder" if stat.S_ISDIR(info.st_mode) else "a FIFO" if stat.S_ISFIFO(info.st_mode) \
                else "a device or socket"
            raise KrcError(f"{shown} is {kind}, not a regular file; remove it or replace it with a file",
                           Location(shown))
        if info.st_size > limit.value:
            raise KrcError(limit.exceeded(f"its size of {info.st_size} bytes"), Location(shown))
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(limit.value + 1)
        if len(data) > limit.value:
            raise KrcError(limit.exceeded("its size"), Location(shown))
        return data
    finally:
        os.close(fd)


def decode_text(data: bytes, shown: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise KrcError(f"{shown} is not UTF-8 text (byte {err.start}); save it as UTF-8 YAML",
                       Location(shown)) from None


def policy_files(policy_dir: Path) -> list[Path]:
    """policies/*.cue, except files starting with '_' or '.', which CUE itself never loads."""
    if not policy_dir.is_dir():
        return []
    return sorted(p for p in policy_dir.glob("*.cue") if not p.name.startswith(("_", ".")))


def _refuse_output_dir(shown: str, is_link: bool, is_other: bool) -> None:
    """A folder krc would write through (`shown`, relative to the project) must be neither a link nor a file."""
    if is_link:
        raise KrcError(f"{shown} is a symbolic link; krc writes only into real folders inside the project: "
                       "remove the link (and add the folder to .gitignore)", Location(shown))
    if is_other:
        raise KrcError(f"{shown} is not a folder; remove it so krc can write there", Location(shown))


@dataclass(frozen=True)
class Project:
    root: Path

    @property
    def environments_dir(self) -> Path:
        return self.root / "environments"

    @property
    def templates_dir(self) -> Path:
        return self.root / "templates"

    @property
    def golden_dir(self) -> Path:
        return self.root / "golden"

    @property
    def rendered_dir(self) -> Path:
        return self.root / "rendered"

    @property
    def vendor_dir(self) -> Path:
        return self.root / "vendor"

    @property
    def policies_dir(self) -> Path:
        return self.root / "policies"

    def environment_file(self, name: str) -> Path:
        error = layer_name_error(name)
        if error:
            raise KrcError(error)
        return self.environments_dir / f"{name}{ENVIRONMENT_SUFFIX}"

    def layer_names(self) -> list[str]:
        """Every environments/<name>.yaml, environments and layers; any other entry there is an error naming it.

        A name becomes a folder under golden/ and rendered/, so `..yaml` (the environment '.') or a name with a
        newline must never get that far.
        """
        problems: list[Problem] = []
        names: list[str] = []
        try:
            entries = sorted(os.scandir(self.environments_dir), key=lambda e: e.name)
        except OSError as err:
            raise KrcError(f"cannot list {self.relative(self.environments_dir)}: {err.strerror}") from None
        # a plain file in a folder inside the project is inside it: only links need resolving (hundreds of
        # environments are listed on every run, the plugin's included)
        folder_inside = self.is_inside(self.environments_dir)
        for entry in entries:
            if _NOT_ENVIRONMENTS.match(entry.name):
                continue
            shown = f"environments/{shown_name(entry.name)}"
            stem = entry.name[: -len(ENVIRONMENT_SUFFIX)] if entry.name.endswith(ENVIRONMENT_SUFFIX) else None
            error = (layer_name_error(stem) if stem is not None else
                     f"'{shown_name(entry.name)}' is not an environment file: environments/ holds <name>.yaml files "
                     "only (rename it, or move it elsewhere)")
            if error is None and not (folder_inside and not entry.is_symlink() or self.is_inside(Path(entry.path))):
                error = (f"{shown} is a link leading outside the project; krc reads only files inside the project: "
                         "replace the link with the file")
            elif error is None and not entry.is_file():
                error = f"{shown} is not a regular file; environments/ holds <name>.yaml files only"
            if error and stem is not None and error.startswith("'"):
                error += ": rename the file"
            if error:
                problems.append(Problem(error, Location(shown)))
            elif stem is not None:
                names.append(stem)
        if problems:
            raise KrcError(problems)
        return sorted(names)  # by name, not file name ('dev' before 'dev-copy')

    def environment_names(self) -> list[str]:
        """Environments to render: every environments/*.yaml except layers (base, _*)."""
        return [n for n in self.layer_names() if n not in LAYER_ONLY and not n.startswith("_")]

    @cached_property
    def resolved_root(self) -> Path:
        """The root with its links resolved, once per Project: messages and confinement checks compare with it for
        every file a run reads."""
        return self.root.resolve()

    def is_inside(self, path: Path) -> bool:
        return path.resolve().is_relative_to(self.resolved_root)

    def read_file(self, path: Path, limit: limits.Limit) -> bytes:
        """A project file's bytes, confined to the project (see read_confined)."""
        return self.read_file_shown(path, limit)[0]

    def read_file_shown(self, path: Path, limit: limits.Limit) -> tuple[bytes, str]:
        """read_file, and the file as messages show it (`relative`), from one resolution of its path."""
        resolved = path.resolve()
        shown = self._relative_resolved(resolved, path)
        return read_resolved(resolved, self.resolved_root, limit, shown), shown

    def checked_output_dir(self, folder: Path) -> Path:
        """A folder krc writes (rendered/<env>, golden/<env>): every step below the root must be a real folder
        (or absent), never a link, so nothing is ever written or deleted elsewhere through one."""
        relative = folder.relative_to(self.root)
        current = self.root
        for part in relative.parts:
            current = current / part
            shown = current.relative_to(self.root).as_posix()  # the link's own name, not where it leads
            _refuse_output_dir(shown, current.is_symlink(), current.exists() and not current.is_dir())
        return folder

    def checked_output_dirs(self, parent: Path, names: Sequence[str]) -> None:
        """checked_output_dir of every `parent / name`, with one listing of `parent` instead of a few system calls
        per folder (render and golden check hundreds)."""
        self.checked_output_dir(parent)
        try:
            with os.scandir(parent) as listing:
                entries = {entry.name: entry for entry in listing}
        except FileNotFoundError:
            return  # nothing below it yet
        for name in names:
            entry = entries.get(name)
            if entry is None:
                continue
            _refuse_output_dir((parent / name).relative_to(self.root).as_posix(), entry.is_symlink(),
                               not entry.is_dir(follow_symlinks=False))

    def relative(self, path: Path) -> str:
        """A path as users see it in messages: relative to the project root when inside it."""
        return self._relative_resolved(path.resolve(), path)

    def _relative_resolved(self, resolved: Path, path: Path) -> str:
        try:
            return resolved.relative_to(self.resolved_root).as_posix()
        except ValueError:
            return str(path)

    def select(self, names: Sequence[str]) -> list[str]:
        """The named environments (all when none are named), checked to exist."""
        known = self.environment_names()
        if not names:
            return known
        unknown = [n for n in names if n not in known]
        if unknown:
            close = difflib.get_close_matches(unknown[0], known, n=1, cutoff=0.5)
            fix = f"did you mean '{close[0]}'?" if close else f"choose one of: {', '.join(known) or '(none yet)'}"
            if unknown[0] in self.layer_names():
                fix = f"'{unknown[0]}' is a layer other environments extend, not an environment; choose one of: " \
                      f"{', '.join(known)}"
            raise KrcError(Problem(f"unknown environment '{shown_name(unknown[0])}'", help=fix))
        return list(dict.fromkeys(names))


def find_project(start: Path) -> Project:
    """The nearest directory at or above `start` that has both environments/ and templates/."""
    start = start.resolve()
    for candidate in (start, *start.parents):
        if (candidate / "environments").is_dir() and (candidate / "templates").is_dir():
            try:  # caches, git and the engines name files by text: a folder in other bytes is refused, once, here
                str(candidate).encode("utf-8")
            except UnicodeEncodeError:
                raise KrcError(f"the project's path {safe_text(str(candidate))} holds bytes that are not UTF-8; "
                               "rename the folder (or one above it) to a UTF-8 name") from None
            return Project(candidate)
    raise KrcError(f"no krc project at or above {start}: expected environments/ and templates/ folders; "
                   "run krc inside the repository or pass --project")

"""Where the golden files to compare with come from: the working tree, or `golden/` as committed at a git ref.

Reading from git (`git ls-tree` + `git cat-file --batch`, two processes however many files) lets a pull request
that also updated golden/ be reviewed against its base branch: the working tree would show nothing.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ..diagnostics.problems import KrcError
from ..output import folders
from ..project.paths import Project


@dataclass(frozen=True)
class WorkingTreeGolden:
    golden_dir: Path
    description: str = "golden/ (working tree)"
    ref: str | None = None

    def files(self, environment: str) -> folders.Files:
        return folders.read_tree(self.golden_dir / environment)

    def environments(self) -> list[str]:
        """Every golden/<env>/ folder that holds a file."""
        if not self.golden_dir.is_dir():
            return []
        return sorted(p.name for p in self.golden_dir.iterdir()
                      if p.is_dir() and not p.name.startswith(".") and _holds_a_file(str(p)))


def _holds_a_file(folder: str) -> bool:
    """Whether a file lies anywhere below `folder` (links to folders not followed); stops at the first one: krc
    diff asks this of every golden/ folder."""
    try:
        with os.scandir(folder) as entries:
            below = []
            for entry in entries:
                if entry.is_file():
                    return True
                if entry.is_dir(follow_symlinks=False):
                    below.append(entry.path)
    except OSError:
        return False
    return any(_holds_a_file(path) for path in below)


def _git(root: Path, args: list[str], stdin: bytes | None = None) -> bytes:
    git = shutil.which("git")
    if git is None:
        raise KrcError("--base needs git on the PATH; install git or compare with the working tree (omit --base)")
    try:
        done = subprocess.run([git, *args], cwd=root, input=stdin, capture_output=True, check=False)
    except OSError as err:
        raise KrcError(f"cannot run git in {root} ({err.strerror}); check the project is a git checkout") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise KrcError(f"git {args[0]} failed in {root}: {message[-1] if message else 'no message'}")
    return done.stdout


@dataclass(frozen=True)
class GitGolden:
    """golden/ as committed at `ref`, read once for every environment."""

    root: Path
    ref: str
    commit: str
    description: str
    _files: dict[str, folders.Files] = field(repr=False, compare=False)

    def files(self, environment: str) -> folders.Files:
        return dict(self._files.get(environment, {}))

    def environments(self) -> list[str]:
        return sorted(self._files)


def _read_blobs(root: Path, oids: list[str]) -> list[bytes]:
    if not oids:
        return []
    out = _git(root, ["cat-file", "--batch"], ("\n".join(oids) + "\n").encode())
    blobs, at = [], 0
    for oid in oids:
        header_end = out.index(b"\n", at)
        header = out[at:header_end].split()
        if len(header) != 3 or header[1] != b"blob":
            raise KrcError(f"git could not read object {oid} of golden/ ({out[at:header_end].decode()!r})")
        size = int(header[2])
        blobs.append(out[header_end + 1:header_end + 1 + size])
        at = header_end + 1 + size + 1  # the content is followed by a newline
    return blobs


def _commit_of(root: Path, ref: str) -> tuple[str, str]:
    """git's prefix of the project folder and the commit `ref` names; KrcError (bad input) otherwise."""
    if ref.startswith("-"):
        raise KrcError(f"--base '{ref}' is not a git ref; give a branch, tag or commit such as origin/main")
    try:
        prefix = os.fsdecode(_git(root, ["rev-parse", "--show-prefix"])).strip()  # any folder name, as git gives it
    except KrcError as err:
        raise KrcError(f"--base needs the project in a git checkout, and {root} is not in one "
                       f"({err.problems[0].message}); run from a clone or omit --base") from None
    try:
        commit = _git(root, ["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"]).decode().strip()
    except KrcError:
        raise KrcError(f"--base '{ref}' is not a commit in {root}; fetch it first (e.g. git fetch origin main) "
                       "or name a branch, tag or commit that exists") from None
    return prefix, commit


def _tree_files(root: Path, commit: str, folder: str) -> dict[str, bytes]:
    """Every file below `folder` (git's path, `/`-terminated) at `commit`, by its path inside the folder."""
    listing = _git(root, ["ls-tree", "-r", "-z", "--full-tree", commit, "--", folder]).split(b"\0")
    entries: list[tuple[str, str]] = []
    for line in listing:
        if not line:
            continue
        # a name that is not UTF-8 is read as the working tree's is (os.fsdecode: surrogateescape), so --base
        # judges such a file as `krc diff` without --base does, and messages show its bytes escaped
        meta, _, path = os.fsdecode(line).partition("\t")
        mode, kind, oid = meta.split()
        if kind == "blob" and path.startswith(folder):
            entries.append((path[len(folder):], oid))
    return {relative: blob for (relative, _), blob in
            zip(entries, _read_blobs(root, [oid for _, oid in entries]), strict=True)}


def git_project_files(project_root: Path, ref: str, folders: tuple[str, ...]) -> tuple[str, dict[str, bytes]]:
    """The commit `ref` names and every file of the project's `folders` as committed there, by their path in
    the project (`policies/x.cue`)."""
    root = project_root.resolve()
    prefix, commit = _commit_of(root, ref)
    files: dict[str, bytes] = {}
    for folder in folders:
        found = _tree_files(root, commit, f"{prefix}{folder}/")
        files.update({f"{folder}/{path}": blob for path, blob in found.items()})
    return commit, files


def git_golden(project_root: Path, ref: str) -> GitGolden:
    """Every golden file at `ref`, by environment; an unknown ref is bad input (exit 2)."""
    root = project_root.resolve()
    prefix, commit = _commit_of(root, ref)
    by_environment: dict[str, folders.Files] = {}
    for relative, blob in _tree_files(root, commit, f"{prefix}golden/").items():
        environment, _, inside = relative.partition("/")
        if inside:
            by_environment.setdefault(environment, {})[inside] = blob
    files = {env: dict(sorted(tree.items())) for env, tree in by_environment.items()}
    return GitGolden(root, ref, commit, f"golden/ at {ref} ({commit[:12]})", files)


def golden_source(project: Project, base: str | None) -> WorkingTreeGolden | GitGolden:
    """golden/ as the working tree holds it, or as committed at `base`."""
    return git_golden(project.root, base) if base else WorkingTreeGolden(project.golden_dir)

"""Where things live in a krc project; every other module asks this one for paths."""
from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .problems import KrcError, Problem

ENVIRONMENT_SUFFIX = ".yaml"
# base.yaml and files starting with '_' are layers to extend, not environments to render
LAYER_ONLY = frozenset({"base"})


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
        return self.environments_dir / f"{name}{ENVIRONMENT_SUFFIX}"

    def environment_names(self) -> list[str]:
        """Environments to render: every environments/*.yaml except layers (base, _*)."""
        names = (p.stem for p in self.environments_dir.glob(f"*{ENVIRONMENT_SUFFIX}"))
        return sorted(n for n in names if n not in LAYER_ONLY and not n.startswith("_"))

    def layer_names(self) -> list[str]:
        """Every file an environment may extend: environments and layers (base, _*)."""
        return sorted(p.stem for p in self.environments_dir.glob(f"*{ENVIRONMENT_SUFFIX}"))

    def relative(self, path: Path) -> str:
        """A path as users see it in messages: relative to the project root when inside it."""
        try:
            return path.resolve().relative_to(self.root.resolve()).as_posix()
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
            raise KrcError(Problem(f"unknown environment '{unknown[0]}'", help=fix))
        return list(dict.fromkeys(names))


def find_project(start: Path) -> Project:
    """The nearest directory at or above `start` that has both environments/ and templates/."""
    start = start.resolve()
    for candidate in (start, *start.parents):
        if (candidate / "environments").is_dir() and (candidate / "templates").is_dir():
            return Project(candidate)
    raise KrcError(f"no krc project at or above {start}: expected environments/ and templates/ folders; "
                   "run krc inside the repository or pass --project")

"""The review memo: `krc diff` answers an environment whose golden/ files and layers keep their signatures from
one file per project, and anything it depends on that changed sends the environment through the full review."""
from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pytest
from review_support import edit, run

from compiler.cache import cache_dir, signatures
from compiler.pipeline import diff
from compiler.pipeline.review_memo import MEMO
from compiler.project.paths import Project

ENVIRONMENTS = ["dev", "prod-eks-gpu"]


@pytest.fixture
def reviewed(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The environments each `krc diff` sends through the full review (what the memo did not answer)."""
    calls: list[list[str]] = []
    original = diff._reviewed

    def spy(context, source, names: Sequence[str], base, run_options):
        calls.append(list(names))
        return original(context, source, names, base, run_options)

    monkeypatch.setattr(diff, "_reviewed", spy)
    return calls


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch, private_cache: Path) -> None:
    """Files count as settled as soon as written (a test cannot wait out RACY_SECONDS), in a cache of its own
    (private_cache: nothing compiled, reviewed or remembered yet; Helm's and Ray's answers already there)."""
    monkeypatch.setattr(signatures, "RACY_SECONDS", 0.0)


def _diff(project: Project, reviewed: list[list[str]], *args: str) -> tuple[str, list[str]]:
    reviewed.clear()
    result = run(project, "diff", *args)
    assert result.exit_code in (0, 1), result.output
    return result.output, sorted(name for names in reviewed for name in names)


def test_a_second_diff_answers_every_unchanged_environment_from_the_memo(accepted: Project, settled: None,
                                                                          reviewed: list[list[str]]):
    first, went_through = _diff(accepted, reviewed)
    assert went_through == ENVIRONMENTS
    assert len([p for p in (cache_dir() / MEMO.name).rglob("*") if p.is_file()]) == 1
    for output_format in ("text", "json", "markdown"):
        again, went_through = _diff(accepted, reviewed, "--format", output_format)
        assert went_through == []
        if output_format == "text":
            assert again == first  # byte-identical to the full review


def test_each_thing_a_review_depends_on_sends_it_through_the_full_review(accepted: Project, settled: None,
                                                                         reviewed: list[list[str]]):
    _diff(accepted, reviewed)
    # a golden edit that keeps the file's size and modification time: its change time still moves
    golden_file = next(p for p in sorted((accepted.golden_dir / "dev").rglob("*.yaml")) if "replicas: 1" in
                       p.read_text(encoding="utf-8"))
    stat = golden_file.stat()
    edit(golden_file, "replicas: 1", "replicas: 2")
    os.utime(golden_file, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    output, went_through = _diff(accepted, reviewed)
    assert went_through == ["dev"] and "== dev:" in output
    edit(golden_file, "replicas: 2", "replicas: 1")
    assert _diff(accepted, reviewed)[1] == ["dev"]  # unchanged again, and remembered again
    assert _diff(accepted, reviewed)[1] == []
    # a layer both extend (a comment: the render is the same, the review is not taken on trust)
    base = accepted.environment_file("base")
    base.write_text(base.read_text(encoding="utf-8") + "# reviewed again\n", encoding="utf-8")
    assert _diff(accepted, reviewed)[1] == ENVIRONMENTS
    assert _diff(accepted, reviewed)[1] == []
    # the policies (the memo's header)
    policy = sorted(accepted.policies_dir.glob("*.cue"))[0]
    policy.write_text(policy.read_text(encoding="utf-8") + "// reviewed again\n", encoding="utf-8")
    assert _diff(accepted, reviewed)[1] == ENVIRONMENTS


def test_a_damaged_memo_is_ignored_and_written_again(accepted: Project, settled: None, reviewed: list[list[str]]):
    first = _diff(accepted, reviewed)[0]
    [memo] = [p for p in (cache_dir() / MEMO.name).rglob("*") if p.is_file()]
    for damage in (b"", b"{", b'{"header": [], "entries": {"dev": {"golden": 5}}}', memo.read_bytes()[:100]):
        memo.write_bytes(damage)
        output, went_through = _diff(accepted, reviewed)
        assert output == first and went_through == ENVIRONMENTS
    assert _diff(accepted, reviewed)[1] == []
    # an entry that names no layer, or a layer without a signature, answers nothing
    kept = MEMO.read_json(memo.name)  # edited as a verified entry: the memo's own checks answer nothing
    for layers in ([], [["environments/unknown.yaml", None]], [[path, None] for path, _ in kept["entries"]["dev"]
                                                                 ["layers"]]):
        kept["entries"]["dev"]["layers"] = layers
        MEMO.write_json(memo.name, kept)
        output, went_through = _diff(accepted, reviewed)
        assert output == first and "dev" in went_through


def test_files_changed_within_the_racy_window_are_not_remembered(accepted: Project, reviewed: list[list[str]],
                                                               monkeypatch: pytest.MonkeyPatch, private_cache: Path):
    """The project copy was written just now: its signatures could still change within the same clock tick."""
    monkeypatch.setattr(signatures, "RACY_SECONDS", 3600.0)
    _diff(accepted, reviewed)
    assert _diff(accepted, reviewed)[1] == ENVIRONMENTS


@pytest.mark.parametrize("where", ["inside", "folder"])
def test_a_link_in_golden_is_reported_even_when_the_memo_knew_the_folder(accepted: Project, settled: None,
                                                                         reviewed: list[list[str]], where: str):
    _diff(accepted, reviewed)
    folder = accepted.golden_dir / "dev"
    if where == "inside":
        (folder / "manifests" / "link.yaml").symlink_to(accepted.environment_file("dev"))
    else:
        folder.rename(accepted.root / "dev-elsewhere")
        folder.symlink_to(accepted.root / "dev-elsewhere")
    result = run(accepted, "diff")
    assert result.exit_code == 2 and "link" in result.output, result.output

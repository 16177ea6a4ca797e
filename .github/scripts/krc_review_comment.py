#!/usr/bin/env python3
"""Publish the `krc diff` report: the job summary, and one pull-request comment updated in place.

    krc_review_comment.py --report krc-review.md --exit-code N [--full-report krc-review.txt]
                          [--stderr krc-review.err] [--pr NUMBER]

The comment is the markdown report, which krc cuts to fit GitHub's 65,536-character comment limit and then
points to the job summary and the `krc-review` artifact. So the job summary gets the markdown report followed by
the full, uncut text report (`krc diff --format text`, `--full-report`); only beyond GitHub's 1 MiB step-summary
limit is that cut, saying so (the artifact always has all of it).
The comment is found again by a hidden marker, so every push edits the same comment instead of adding one.
When `krc diff` failed (exit code 2 or more) the comment says so, with the error, instead of an empty report.
Environment: GITHUB_TOKEN, GITHUB_REPOSITORY (owner/name), GITHUB_API_URL (default https://api.github.com),
GITHUB_STEP_SUMMARY (optional), GITHUB_EVENT_PATH (for the pull-request number when --pr is not given).
A token that may not comment (pull requests from forks) is a warning, not a failure: the job summary remains.
Standard library only: it runs before anything is installed.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path

MARKER = "<!-- krc-review -->"
COMMENT_LIMIT = 65_536
SUMMARY_LIMIT = 1024 * 1024  # bytes GitHub accepts in one step's job summary


def build_body(report: str, exit_code: int, stderr: str) -> str:
    if exit_code >= 2:
        error = (stderr.strip() or "(no error output)")[-4000:]
        fence = _fence(error)  # longer than any run of backticks in the error: it cannot close the block
        report = (f"## krc diff\n\n:x: **`krc diff` failed (exit {exit_code})**: the render or the golden files "
                  f"have an error, so there is no review report.\n\n{fence}\n{error}\n{fence}\n")
    body = f"{MARKER}\n{report}"
    if len(body) > COMMENT_LIMIT:  # krc keeps under its budget; this only guards against a changed budget
        body = (body[:COMMENT_LIMIT - 200] + "\n\n_Report cut at GitHub's comment limit: the full report is in "
                "the job summary and the `krc-review` artifact._\n")
    return body


def _fence(text: str) -> str:
    longest, run = 0, 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def build_summary(body: str, full_report: str, limit: int = SUMMARY_LIMIT) -> str:
    """The job summary: the comment's report, then the full text report, within `limit` UTF-8 bytes."""
    summary = body.replace(MARKER + "\n", "", 1).rstrip("\n") + "\n"
    if not full_report.strip():
        return summary
    fence = _fence(full_report)
    head = f"\n<details><summary>Full report (<code>krc diff --format text</code>)</summary>\n\n{fence}text\n"
    tail = f"{fence}\n\n</details>\n"
    room = limit - len((summary + head + tail).encode("utf-8"))
    report = full_report if full_report.endswith("\n") else full_report + "\n"
    if len(report.encode("utf-8")) > room:
        notice = (f"{fence}\n\n_Full report cut at GitHub's 1 MiB job-summary limit: download the `krc-review` "
                  "artifact (krc-review.txt) for all of it._\n\n</details>\n")
        keep = report.encode("utf-8")[:max(room - len(notice.encode("utf-8")), 0)].decode("utf-8", "ignore")
        return summary + head + keep[:keep.rfind("\n") + 1] + notice
    return summary + head + report + tail


class GitHub:
    def __init__(self, api: str, repository: str, token: str):
        self.api, self.repository, self.token = api.rstrip("/"), repository, token

    def request(self, method: str, path: str, payload: dict | None = None):
        data = json.dumps(payload).encode() if payload is not None else None
        request = urllib.request.Request(f"{self.api}{path}", data=data, method=method, headers={
            "Authorization": f"Bearer {self.token}", "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28", "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read() or b"null")

    def find_comment(self, number: int) -> int | None:
        page = 1
        while True:
            path = f"/repos/{self.repository}/issues/{number}/comments?per_page=100&page={page}"
            comments = self.request("GET", path)
            for comment in comments:
                if MARKER in (comment.get("body") or ""):
                    return int(comment["id"])
            if len(comments) < 100:
                return None
            page += 1

    def upsert(self, number: int, body: str) -> str:
        existing = self.find_comment(number)
        if existing is None:
            self.request("POST", f"/repos/{self.repository}/issues/{number}/comments", {"body": body})
            return "created"
        self.request("PATCH", f"/repos/{self.repository}/issues/comments/{existing}", {"body": body})
        return "updated"


def pull_request_number(explicit: int | None) -> int | None:
    if explicit:
        return explicit
    event_path = os.environ.get("GITHUB_EVENT_PATH")
    if not event_path or not Path(event_path).is_file():
        return None
    event = json.loads(Path(event_path).read_text(encoding="utf-8"))
    return (event.get("pull_request") or {}).get("number")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", type=Path, required=True)
    parser.add_argument("--exit-code", type=int, required=True, help="the exit code of krc diff")
    parser.add_argument("--full-report", type=Path, help="krc diff --format text: the uncut report")
    parser.add_argument("--stderr", type=Path)
    parser.add_argument("--pr", type=int)
    args = parser.parse_args(argv)
    report = args.report.read_text(encoding="utf-8") if args.report.is_file() else ""
    stderr = args.stderr.read_text(encoding="utf-8") if args.stderr and args.stderr.is_file() else ""
    full = args.full_report.read_text(encoding="utf-8") if args.full_report and args.full_report.is_file() else ""
    body = build_body(report, args.exit_code, stderr)

    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as handle:
            handle.write(build_summary(body, full if args.exit_code < 2 else "") + "\n")
    number = pull_request_number(args.pr)
    token, repository = os.environ.get("GITHUB_TOKEN"), os.environ.get("GITHUB_REPOSITORY")
    if number is None or not token or not repository:
        print("not a pull request (or no token): job summary only", file=sys.stderr)
        return 0
    github = GitHub(os.environ.get("GITHUB_API_URL", "https://api.github.com"), repository, token)
    try:
        action = github.upsert(int(number), body)
    except urllib.error.HTTPError as err:
        if err.code in (403, 404):  # forks get a read-only token: the job summary still has the report
            print(f"::warning::cannot comment on pull request #{number} (HTTP {err.code}); see the job summary")
            return 0
        raise
    print(f"review comment {action} on pull request #{number}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The GitHub Actions workflow and the scripts it calls, run for real (the GitHub API is a local HTTP server)."""
from __future__ import annotations

import http.server
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from http_support import base_url, serving
from review_support import run, set_chart_version

from compiler.project.paths import Project

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / ".github" / "scripts"
MARKER = "<!-- krc-review -->"


def script(name: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    clean = {"PATH": "/usr/bin:/bin", **(env or {})}
    return subprocess.run([sys.executable, str(SCRIPTS / name), *args], capture_output=True, text=True, env=clean,
                          timeout=60)


def test_the_workflow_is_the_repositorys_own_action():
    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "krc-review.yml").read_text())
    [job] = workflow["jobs"].values()
    checkout, review = job["steps"]
    assert checkout["uses"].startswith("actions/checkout@") and checkout["with"]["fetch-depth"] == 0
    assert review["uses"] == "./" and "run" not in review  # action.yml at the root: what other repositories use
    # a push to main runs it too, with no pull request to review against or comment on: it fills the caches new
    # pull requests restore
    assert workflow[True]["push"]["branches"] == ["main"]  # YAML 1.1 reads the key `on` as true
    assert review["with"] == {"base": "${{ github.event_name == 'push' && 'HEAD' || '' }}",
                              "comment": "${{ github.event_name == 'pull_request' }}"}
    assert workflow["permissions"]["pull-requests"] == "write" and workflow["permissions"]["issues"] == "write"
    action = yaml.safe_load((REPO / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    commands = "\n".join(str(step.get("run", "")) for step in action["runs"]["steps"])
    # every format from one compile: one krc diff writes all three, into the runner's temporary folder
    assert commands.count("krc diff --") == 1 and '--output json="$reports/krc-review.json"' in commands
    for command in ("krc vendor", "krc check", "krc lint --format github", "krc policy"):
        assert command in commands
    for name in ("krc_review_comment.py", "krc_crd_gate.py"):
        assert f"$KRC_SOURCE/.github/scripts/{name}" in commands and (SCRIPTS / name).is_file()
    # inputs reach the scripts as variables, never pasted into them
    assert "${{" not in commands
    uses = {step["uses"].split("@")[0]: step for step in action["runs"]["steps"] if "uses" in step}
    assert uses["actions/setup-go"]["with"]["go-version"] == "${{ inputs.go-version }}"
    assert action["inputs"]["go-version"]["default"].startswith("1.26")
    assert uses["actions/upload-artifact"]["with"]["name"] == "krc-review"
    assert not any(name.startswith("actions/setup-node") for name in uses)  # CUE runs inside krc's engine
    # krc's cache: restored after the keys are known and before the first command that compiles, saved after the
    # last one (and before the step that fails the job); Ray's generators: restored before they are installed
    steps = action["runs"]["steps"]

    def first(predicate) -> int:
        return next(i for i, step in enumerate(steps) if predicate(step))

    restore = first(lambda s: s.get("uses", "").startswith("actions/cache/restore@") and "keys.outputs.key" in
                    str(s["with"]["key"]))
    save = first(lambda s: s.get("uses", "").startswith("actions/cache/save@") and "keys.outputs.key" in
                 str(s["with"]["key"]))
    keys = first(lambda s: "krc_cache_keys.py" in str(s.get("run", "")))
    assert keys < restore < first(lambda s: "krc check" in str(s.get("run", "")))
    assert first(lambda s: "krc diff --" in str(s.get("run", ""))) < save < first(
        lambda s: "krc_crd_gate.py" in str(s.get("run", "")))
    assert steps[save]["if"].startswith("always()")
    ray_restore = first(lambda s: s.get("id") == "ray-restore")
    assert ray_restore < first(lambda s: "pip\" install" in str(s.get("run", "")))


class FakeGitHub(http.server.BaseHTTPRequestHandler):
    comments: list[dict] = []
    calls: list[tuple[str, str]] = []
    deny = False

    def _reply(self, status: int, payload) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> dict:
        return json.loads(self.rfile.read(int(self.headers["Content-Length"])))

    def do_GET(self):  # noqa: N802 - http.server's naming
        self.calls.append(("GET", self.path))
        assert self.headers["Authorization"] == "Bearer t0ken"
        page = int(self.path.rsplit("page=", 1)[1])
        self._reply(200, self.comments[(page - 1) * 100:page * 100])

    def do_POST(self):  # noqa: N802
        self.calls.append(("POST", self.path))
        if self.deny:
            return self._reply(403, {"message": "Resource not accessible by integration"})
        comment = {"id": 1000 + len(self.comments), "body": self._body()["body"]}
        self.comments.append(comment)
        self._reply(201, comment)

    def do_PATCH(self):  # noqa: N802
        self.calls.append(("PATCH", self.path))
        comment_id = int(self.path.rsplit("/", 1)[1])
        comment = next(c for c in self.comments if c["id"] == comment_id)
        comment["body"] = self._body()["body"]
        self._reply(200, comment)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def github():
    FakeGitHub.comments = [{"id": i, "body": f"unrelated {i}"} for i in range(150)]  # two pages
    FakeGitHub.calls, FakeGitHub.deny = [], False
    with serving(FakeGitHub) as server:
        yield FakeGitHub, base_url(server)


def test_the_comment_is_created_once_then_updated_in_place(github, tmp_path: Path):
    fake, api = github
    report, summary = tmp_path / "krc-review.md", tmp_path / "summary.md"
    env = {"GITHUB_TOKEN": "t0ken", "GITHUB_REPOSITORY": "acme/ray", "GITHUB_API_URL": api,
           "GITHUB_STEP_SUMMARY": str(summary)}
    report.write_text("## krc diff\n\nfirst\n")
    done = script("krc_review_comment.py", "--report", str(report), "--exit-code", "1", "--pr", "7", env=env)
    assert done.returncode == 0, done.stderr
    assert "review comment created on pull request #7" in done.stdout
    report.write_text("## krc diff\n\nsecond\n")
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7}}))
    done = script("krc_review_comment.py", "--report", str(report), "--exit-code", "1",
                  env={**env, "GITHUB_EVENT_PATH": str(event)})
    assert "review comment updated on pull request #7" in done.stdout
    ours = [c for c in fake.comments if MARKER in c["body"]]
    assert len(ours) == 1 and ours[0]["body"] == f"{MARKER}\n## krc diff\n\nsecond\n"
    assert ("PATCH", f"/repos/acme/ray/issues/comments/{ours[0]['id']}") in fake.calls
    assert summary.read_text().count("## krc diff") == 2 and MARKER not in summary.read_text()


def test_a_failed_diff_is_reported_and_forks_only_get_the_summary(github, tmp_path: Path):
    fake, api = github
    fake.deny = True
    err = tmp_path / "krc-review.err"
    err.write_text("environments/dev.yaml:3:1: error invalid YAML\n")
    summary = tmp_path / "summary.md"
    done = script("krc_review_comment.py", "--report", str(tmp_path / "absent.md"), "--exit-code", "2", "--stderr",
                  str(err), "--pr", "3", env={"GITHUB_TOKEN": "t0ken", "GITHUB_REPOSITORY": "acme/ray",
                                              "GITHUB_API_URL": api, "GITHUB_STEP_SUMMARY": str(summary)})
    assert done.returncode == 0 and "::warning::cannot comment on pull request #3 (HTTP 403)" in done.stdout
    text = summary.read_text()
    assert "`krc diff` failed (exit 2)" in text and "environments/dev.yaml:3:1: error invalid YAML" in text


def gate_report(project: Project, tmp_path: Path) -> Path:
    result = run(project, "diff", "--format", "json")
    assert result.exit_code == 1, result.output
    path = tmp_path / "krc-review.json"
    path.write_text(result.output)
    return path


@pytest.mark.usefixtures("project_without_policies")  # not about policies: no CUE engine run
def test_the_crd_gate_fails_unapproved_breaking_upgrades(accepted: Project, tmp_path: Path):
    set_chart_version(accepted, "prod-eks-gpu", "1.6.2", "1.7.0")
    report = gate_report(accepted, tmp_path)
    done = script("krc_crd_gate.py", str(report))
    assert done.returncode == 1
    assert ("::error::prod-eks-gpu: breaking CRD upgrade kuberay-operator 1.6.2 -> 1.7.0 (17 breaking CRD changes) "
            "is not approved: no approvals/prod-eks-gpu.crd-upgrade.yaml.") in done.stdout

    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 1, "labels": [{"name": "crd-upgrade-approved"}]}}))
    done = script("krc_crd_gate.py", str(report), env={"GITHUB_EVENT_PATH": str(event)})
    assert done.returncode == 0 and "approved by the 'crd-upgrade-approved' label" in done.stdout

    data = yaml.safe_load(json.loads(report.read_text())["environments"][1]["crdGate"]["approval"]["template"])
    data["reason"] = "reviewed: workloadRef unused; CRDs applied first by the CRD application"
    (accepted.root / "approvals").mkdir()
    (accepted.root / "approvals" / "prod-eks-gpu.crd-upgrade.yaml").write_text(yaml.safe_dump(data))
    done = script("krc_crd_gate.py", str(gate_report(accepted, tmp_path)))
    assert done.returncode == 0 and "no unapproved breaking CRD upgrade" in done.stdout


@pytest.mark.usefixtures("project_without_policies")  # not about policies: no CUE engine run
def test_the_crd_gate_passes_without_gates_and_rejects_bad_reports(accepted: Project, tmp_path: Path):
    (accepted.environment_file("dev")).write_text(accepted.environment_file("dev").read_text()
                                                  .replace("maxReplicas: 2", "maxReplicas: 3"))
    assert script("krc_crd_gate.py", str(gate_report(accepted, tmp_path))).returncode == 0
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    done = script("krc_crd_gate.py", str(bad))
    assert done.returncode == 2 and "::error::cannot read the krc diff report" in done.stdout


@pytest.mark.usefixtures("project_without_policies")  # not about policies: no CUE engine run
def test_the_job_summary_has_the_full_report_the_comment_cuts(accepted: Project, github, tmp_path: Path):
    fake, api = github
    set_chart_version(accepted, "prod-eks-gpu", "1.6.2", "1.7.0")
    manifests = accepted.golden_dir / "dev" / "manifests"
    cluster = (manifests / "raycluster-ray-cpu-demo.yaml").read_text()
    for i in range(40):  # removed objects the markdown cannot all show (1.4 KB each, about 20 fit dev's share)
        (manifests / f"raycluster-old-{i:03}.yaml").write_text(
            cluster.replace("name: ray-cpu-demo", f"name: old-{i:03}"))
    markdown, text = run(accepted, "diff", "--format", "markdown"), run(accepted, "diff", "--format", "text")
    assert markdown.exit_code == text.exit_code == 1
    assert "more not shown here" in markdown.output
    assert "or see the full report in the CI job summary or the `krc-review` artifact" in markdown.output
    assert "RayCluster ray-demo/old-039" not in markdown.output  # cut from the comment...
    report, full, summary = tmp_path / "krc-review.md", tmp_path / "krc-review.txt", tmp_path / "summary.md"
    report.write_text(markdown.output)
    full.write_text(text.output)
    env = {"GITHUB_TOKEN": "t0ken", "GITHUB_REPOSITORY": "acme/ray", "GITHUB_API_URL": api,
           "GITHUB_STEP_SUMMARY": str(summary)}
    done = script("krc_review_comment.py", "--report", str(report), "--full-report", str(full), "--exit-code", "1",
                  "--pr", "9", env=env)
    assert done.returncode == 0, done.stderr
    written = summary.read_text()
    assert written.startswith(markdown.output.rstrip("\n"))  # the comment's report first
    assert text.output in written and "- RayCluster ray-demo/old-039 (ray.io/v1) removed" in written  # ...not here
    assert written.count("<details>") == written.count("</details>")
    [comment] = [c for c in fake.comments if MARKER in c["body"]]
    assert comment["body"] == f"{MARKER}\n{markdown.output}" and text.output not in comment["body"]


def test_the_full_report_is_cut_only_beyond_the_summary_limit(tmp_path: Path):
    sys.path.insert(0, str(SCRIPTS))
    try:
        import krc_review_comment as comment
    finally:
        sys.path.remove(str(SCRIPTS))
    body = f"{MARKER}\n## krc diff\n\nsmall\n"
    report = "".join(f"line {i} with ``` fences and é\n" for i in range(40_000))  # ~1.3 MB
    assert comment.build_summary(body, report[:500_000].rsplit("\n", 1)[0] + "\n").count("line 1") > 1
    summary = comment.build_summary(body, report)
    assert len(summary.encode("utf-8")) <= comment.SUMMARY_LIMIT == 1024 * 1024
    assert "_Full report cut at GitHub's 1 MiB job-summary limit: download the `krc-review` artifact" in summary
    assert "line 30000 with" in summary and "line 39999 with" not in summary
    assert "````text\nline 0 with ``` fences" in summary  # a longer fence than any in the report
    assert summary.count("````") == 2 and summary.endswith("</details>\n")
    small = comment.build_summary(body, "short report\n")
    assert small == "## krc diff\n\nsmall\n\n<details><summary>Full report (<code>krc diff --format text</code>)" \
        "</summary>\n\n```text\nshort report\n```\n\n</details>\n"
    assert comment.build_summary(body, "") == "## krc diff\n\nsmall\n"


def cache_keys(project: Project, tmp_path: Path, **extra: str) -> tuple[str, dict[str, str]]:
    """krc_cache_keys.py run in the project as the action runs it: what it writes to GITHUB_ENV and GITHUB_OUTPUT."""
    exported, outputs = tmp_path / "github-env", tmp_path / "github-output"
    exported.write_text("")
    outputs.write_text("")
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(tmp_path), "RUNNER_OS": "Linux",
           "RUNNER_TEMP": str(tmp_path / "runner-temp"), "GITHUB_ENV": str(exported), "GITHUB_OUTPUT": str(outputs),
           **extra}
    done = subprocess.run([sys.executable, str(SCRIPTS / "krc_cache_keys.py")], cwd=project.root, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return exported.read_text(), dict(line.split("=", 1) for line in outputs.read_text().splitlines())


def test_the_cache_key_follows_krc_the_chart_lock_and_the_templates_only(project: Project, tmp_path: Path):
    exported, first = cache_keys(project, tmp_path)
    folder = str(tmp_path / "runner-temp" / "krc-cache")
    assert exported == f"KRC_CACHE_DIR={folder}\n" and first["cache-dir"] == folder
    assert first["key"].startswith("krc-cache-Linux-")
    assert first["ray-key"] == f"krc-ray-Linux-py{sys.version.split()[0]}-2.58.0"  # the fixture's Ray version
    # an environment or a policy edited: most entries still hold, so the same key carries them forward
    dev = project.environment_file("dev")
    dev.write_text(dev.read_text() + "# edited\n")
    policy = next(project.policies_dir.glob("*.cue"))
    policy.write_text(policy.read_text() + "// edited\n")
    assert cache_keys(project, tmp_path)[1]["key"] == first["key"]
    # a template or the chart lock edited: every entry is of other inputs, a cache of its own starts
    template = project.templates_dir / "objects" / "core.jsonnet"
    template.write_text(template.read_text() + "\n")
    second = cache_keys(project, tmp_path)[1]["key"]
    lock = project.vendor_dir / "charts.lock.yaml"
    lock.write_text(lock.read_text() + "# edited\n")
    third = cache_keys(project, tmp_path)[1]["key"]
    assert len({first["key"], second, third}) == 3
    # a cache folder the job sets is the one kept
    exported, given = cache_keys(project, tmp_path, KRC_CACHE_DIR=str(tmp_path / "mine"))
    assert exported == f"KRC_CACHE_DIR={tmp_path / 'mine'}\n" and given["cache-dir"] == str(tmp_path / "mine")


def test_the_cache_keys_need_krc(tmp_path: Path):
    done = subprocess.run([sys.executable, str(SCRIPTS / "krc_cache_keys.py")], cwd=tmp_path, capture_output=True,
                          text=True, env={"PATH": "/usr/bin:/bin", "GITHUB_ENV": str(tmp_path / "env")}, timeout=60)
    assert done.returncode == 2 and "install krc before this step" in done.stderr
    assert not (tmp_path / "env").exists()  # nothing exported when no key could be made

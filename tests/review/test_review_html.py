"""`krc diff --format html` opened in a real browser (Debian's Chromium, headless, driven by Playwright), and the
comment's Mermaid pictures read through a GFM renderer (issue 34, item 4)."""
from __future__ import annotations

import json
from pathlib import Path

from gfm_support import read_page, render_gfm
from playwright.sync_api import sync_playwright
from review_support import edit, run, set_chart_version
from test_review_injection import HOSTILE
from test_review_shown import GPU_GROUP

from compiler.project.paths import Project

CHROMIUM = "/usr/bin/chromium"  # Debian's package; .ci/run installs it when it is missing
PROD = "prod-eks-gpu"


def _change(project: Project) -> None:
    set_chart_version(project, PROD, "1.6.2", "1.7.0")
    edit(project.environment_file(PROD), "          node.kubernetes.io/instance-type: g5.12xlarge\n",
         "          node.kubernetes.io/instance-type: g5.12xlarge\n" + GPU_GROUP)
    golden = project.golden_dir / "dev" / "manifests" / "raycluster-ray-cpu-demo.yaml"
    edit(golden, "    krc.dev/source: clusters.ray-cpu-demo\n", f"    krc.dev/source: {json.dumps(HOSTILE)}\n")


def test_the_comment_draws_the_sync_order_and_the_gpus_as_mermaid(accepted: Project):
    _change(accepted)
    body = run(accepted, "diff", "--format", "markdown").output
    html = render_gfm(body)
    assert html.count('<pre><code class="language-mermaid">flowchart LR\n') == 2  # dev and prod each
    assert html.count('<pre><code class="language-mermaid">xychart-beta\n') == 1  # only prod has GPUs
    assert '```mermaid\nflowchart LR\n  subgraph w0["wave -2"]\n    a0_0["krc-prod-eks-gpu-crds - crds"]\n' in body
    assert '    a2_1["krc-prod-eks-gpu-workloads - workloads into ray-prod"]\n' in body
    assert "  w0 --> w1\n  w1 --> w2\n" in body
    assert ('```mermaid\nxychart-beta\n  title "prod-eks-gpu: GPUs at max scale (limit 32, '
            'policy/prod-gpu-limit)"\n  x-axis ["a10g", "g5.2xlarge", "l4", "total"]\n') in body
    assert "  bar [16, 7, 4, 27]\n  line [32, 32, 32, 32]\n" in body
    assert read_page(html).mentions() == []
    report = json.loads(run(accepted, "diff", PROD, "--format", "json").output)
    [prod] = report["environments"]
    assert prod["syncOrder"][0] == {"wave": -2, "application": "krc-prod-eks-gpu-crds", "syncs": "crds"}
    assert {"accelerator": "l4", "before": 0, "after": 4} in prod["gpusByAccelerator"]


def test_the_html_page_shows_the_review_in_chromium_and_loads_nothing(accepted: Project, tmp_path: Path):
    _change(accepted)
    page_file = tmp_path / "krc-review.html"
    result = run(accepted, "diff", "--format", "markdown", "--output", f"html={page_file}")
    assert result.exit_code == 1, result.output
    text = page_file.read_text()
    assert text.startswith("<!DOCTYPE html>") and "<script" not in text and "http://" not in text.replace(
        "http://www.w3.org", "")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            requests, problems, dialogs = [], [], []
            page.on("request", lambda request: requests.append(request.url))
            page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
            page.on("pageerror", lambda error: problems.append(str(error)))
            page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
            page.goto(page_file.as_uri())
            assert page.title() == "krc diff: golden/ (working tree)"
            # the gate, the summary and the pictures are what a reader sees first
            assert page.get_by_role("heading", name="CRD upgrade gate: prod-eks-gpu (kuberay-operator 1.6.2 → 1.7.0)"
                                    ).is_visible()
            summary = page.locator("table").filter(has_text="Environment").first
            assert summary.is_visible() and "23 → 27 / 32 ✓" in summary.inner_text()
            sync = page.locator('figure.sync[aria-label="sync order of prod-eks-gpu"]')
            assert sync.is_visible()
            assert [w.inner_text().split("\n")[0].strip("→ ") for w in sync.locator(".wave-name").all()] == [
                "wave -2", "wave -1", "wave 0"]
            assert "krc-prod-eks-gpu-workloads workloads into ray-prod" in sync.inner_text()
            chart = page.locator('figure.capacity svg[aria-label="prod-eks-gpu: GPUs at max scale"]')
            assert chart.is_visible() and chart.bounding_box()["width"] > 300
            labels = chart.locator("text").all_text_contents()
            assert labels[:2] == ["a10g", "16"] and "l4" in labels and "limit 32 (policy/prod-gpu-limit)" in labels
            # details open on a click, like the comment's
            role = page.locator("details", has_text="Role ray-prod/kuberay-operator").first
            assert not role.get_by_text("permissions gained in namespace ray-prod", exact=False).is_visible()
            role.locator("summary").first.click()
            assert role.get_by_text("permissions gained in namespace ray-prod", exact=False).first.is_visible()
            # a hostile value stays text: no image, no script ran, nothing fetched
            assert page.locator("img").count() == 0 and page.evaluate("document.scripts.length") == 0
            dev = page.locator("details", has_text="RayCluster ray-demo/ray-cpu-demo").first
            dev.locator("summary").first.click()
            assert "<img src=x onerror=alert(1)>" in dev.inner_text()
            assert requests == [page_file.as_uri()] and dialogs == [] and problems == []
        finally:
            browser.close()


MERMAID = Path(__file__).parent / "mermaid" / "node_modules" / "mermaid" / "dist" / "mermaid.min.js"


def test_the_comments_mermaid_parses_and_draws_in_chromium(accepted: Project, tmp_path: Path):
    """The diagrams through Mermaid itself (pinned in tests/review/mermaid/package-lock.json; `make test` installs
    it), in the browser, as GitHub draws them: each parses, and the drawing holds the waves and accelerators."""
    _change(accepted)
    body = run(accepted, "diff", "--format", "markdown").output
    diagrams = [block.split("\n```", 1)[0] for block in body.split("```mermaid\n")[1:]]
    assert len(diagrams) == 3  # dev's and prod's sync order, prod's GPUs
    page_file = tmp_path / "mermaid.html"
    page_file.write_text(f'<!DOCTYPE html><html><head><script src="{MERMAID.as_uri()}"></script></head><body>'
                         "</body></html>")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            page.goto(page_file.as_uri())
            drawn = page.evaluate("""async (diagrams) => {
                mermaid.initialize({startOnLoad: false, securityLevel: 'strict'});
                const out = [];
                for (const [i, text] of diagrams.entries()) {
                    await mermaid.parse(text);
                    const {svg} = await mermaid.render('d' + i, text);
                    const holder = document.createElement('div');
                    holder.innerHTML = svg;
                    out.push(holder.textContent);
                }
                return out;
            }""", diagrams)
        finally:
            browser.close()
    sync = next(text for text in drawn if "krc-prod-eks-gpu-crds" in text)
    assert all(words in sync for words in ("wave -2", "wave -1", "wave 0", "krc-prod-eks-gpu-workloads"))
    gpus = next(text for text in drawn if "GPUs at max scale" in text)
    assert all(words in gpus for words in ("a10g", "l4", "total", "limit 32"))

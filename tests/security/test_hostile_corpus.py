"""Hostile and broken input, as an attacker and as a careless user would write it: one table, one test.

Every case asserts the exit code, that the error names where the problem is, that no traceback escaped, that the
run stayed within its time bound, and that nothing changed in golden/, rendered/, vendor/, environments/,
templates/ or a folder outside the project (every tree kept whole, links included, before and after).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest
from security_support import (
    Case,
    Member,
    changed_parts,
    chart_members,
    chart_repository,
    replace_in,
    run,
    snapshot,
    tgz,
    unvendor,
)

from compiler.project.paths import Project

KRC = Path(sys.executable).with_name("krc")
ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8))


def env_file(name: str, text: str | bytes):
    def setup(root: Path, outside: Path) -> None:
        path = root / "environments" / name
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return setup


def dev_text(old: str, new: str):
    def setup(root: Path, outside: Path) -> None:
        replace_in(root / "environments" / "dev.yaml", old, new)
    return setup


def dev_append(text: str):
    def setup(root: Path, outside: Path) -> None:
        path = root / "environments" / "dev.yaml"
        path.write_text(path.read_text() + text)
    return setup


def dev_replace(text: str | bytes):
    return env_file("dev.yaml", text)


def symlink(relative: str, to: str):
    """A link at `relative` in the project; `to` may name '{outside}' for the outside folder."""
    def setup(root: Path, outside: Path) -> None:
        link = root / relative
        link.parent.mkdir(parents=True, exist_ok=True)
        if link.is_dir() and not link.is_symlink():
            shutil.rmtree(link)
        elif link.exists() or link.is_symlink():
            link.unlink()
        link.symlink_to(to.format(outside=outside, root=root))
    return setup


def fifo(relative: str):
    def setup(root: Path, outside: Path) -> None:
        os.mkfifo(root / relative)
    return setup


def folder(relative: str):
    def setup(root: Path, outside: Path) -> None:
        (root / relative).mkdir(parents=True)
    return setup


def template(relative: str, text: str):
    def setup(root: Path, outside: Path) -> None:
        path = root / "templates" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.replace("{outside}", str(outside)))
    return setup


def jinja_object(expression: str):
    return template("objects/evil.yaml.j2", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: evil\n"
                                            f"data:\n  x: {expression}\n")


def jsonnet_object(name: str = "x", kind: str = "ConfigMap", namespace: str | None = None):
    ns = f", namespace: {namespace!r}" if namespace is not None else ""
    return template("objects/evil.jsonnet", f"[{{apiVersion: 'v1', kind: {kind!r}, metadata: {{name: {name!r}{ns}}}}}]")


def lock_text(text: str):
    def setup(root: Path, outside: Path) -> None:
        (root / "vendor" / "charts.lock.yaml").write_text(text)
    return setup


def golden_file(relative: str, data: bytes):
    def setup(root: Path, outside: Path) -> None:
        (root / "golden" / relative).write_bytes(data)
    return setup


def crafted_chart(members: list[Member] | None = None, archive: bytes | None = None, url: str | None = None,
                  env: dict[str, str] | None = None):
    """dev's chart (1.7.0) forgotten, and a repository offering a crafted one in its place."""
    def setup(root: Path, outside: Path) -> dict[str, str]:
        unvendor(root)
        data = archive if archive is not None else tgz(members or chart_members())
        repo = chart_repository(root.parent / "repo", data, url=url.format(outside=outside) if url else None)
        return {"KRC_CHART_REPOSITORY": repo, **(env or {})}
    return setup


def index_text(text: str | bytes):
    def setup(root: Path, outside: Path) -> dict[str, str]:
        unvendor(root)
        repo = root.parent / "repo"
        repo.mkdir()
        (repo / "index.yaml").write_bytes(text if isinstance(text, bytes) else text.encode())
        return {"KRC_CHART_REPOSITORY": repo.as_uri()}
    return setup


def truncated_chart(root: Path, outside: Path) -> dict[str, str]:
    real = (root / "vendor" / "charts" / "kuberay-operator-1.7.0.tgz").read_bytes()
    unvendor(root)
    return {"KRC_CHART_REPOSITORY": chart_repository(root.parent / "repo", real[: len(real) // 2])}


def nothing(root: Path, outside: Path) -> None:
    return None


def without_policies(root: Path, outside: Path) -> None:
    shutil.rmtree(root / "policies")


def deep_runtime_env(root: Path, outside: Path) -> None:
    """A RayJob manifest whose runtimeEnvYAML nests brackets 100,000 deep (PyYAML's C parser crashed on it)."""
    (root / "deep-job.yaml").write_text("apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: a, namespace: x}\n"
                                        "spec:\n  entrypoint: python x.py\n  clusterSelector: {ray.io/cluster: c}\n"
                                        f"  runtimeEnvYAML: \"{'[' * 100_000}\"\n")


NOT_UTF8_NAME = b"\xff.yaml"


def committed_non_utf8_golden_name(root: Path, outside: Path) -> None:
    """A commit whose golden/dev/manifests/ holds a file named by a byte that is not UTF-8 (the working tree does
    not): what `--base` reads back from git."""
    manifests = os.fsencode(root / "golden" / "dev" / "manifests")
    shutil.copyfile(manifests + b"/namespace-ray-demo.yaml", manifests + b"/" + NOT_UTF8_NAME)
    git = ["git", "-c", "user.name=krc", "-c", "user.email=krc@example.com", "-c", "commit.gpgsign=false"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
        subprocess.run([*git, *args], cwd=root, check=True, capture_output=True)
    os.unlink(manifests + b"/" + NOT_UTF8_NAME)


def params(value: list) -> dict[str, str]:
    import json
    return {"ARGOCD_APP_PARAMETERS": json.dumps(value)}


RENDER, GOLDEN, CHECK, DIFF, VENDOR = ("render",), ("golden",), ("check",), ("diff",), ("vendor", "dev")
GENERATE = ("argocd", "generate")
DEV = "environments/dev.yaml"

CASES = [
    # ---- environment file names: an environment's name becomes folders under golden/ and rendered/
    Case("dot-env-wipes-golden", env_file("..yaml", "extends: base\n"), GOLDEN, 2, "environments/..yaml"),
    Case("dots-env", env_file("...yaml", "extends: base\n"), RENDER, 2, "environments/...yaml"),
    Case("hidden-env", env_file(".x.yaml", "extends: base\n"), RENDER, 2, "environments/.x.yaml"),
    Case("upper-case-env", env_file("Dev2.yaml", "extends: base\n"), RENDER, 2, "environments/Dev2.yaml"),
    Case("underscore-inside-env", env_file("dev_2.yaml", "extends: base\n"), RENDER, 2, "environments/dev_2.yaml"),
    Case("newline-env", env_file("a\nb.yaml", "extends: base\n"), RENDER, 2, "environments/a\\nb.yaml"),
    Case("space-env", env_file("a b.yaml", "extends: base\n"), GOLDEN, 2, "environments/a b.yaml"),
    Case("too-long-env", env_file("a" * 64 + ".yaml", "extends: base\n"), RENDER, 2, "environments/aaaa",
         "at most 63"),
    Case("yml-suffix", env_file("x.yml", "extends: base\n"), RENDER, 2, "environments/x.yml"),
    Case("leading-dash-env", env_file("-x.yaml", "extends: base\n"), RENDER, 2, "environments/-x.yaml"),
    Case("trailing-dash-env", env_file("x-.yaml", "extends: base\n"), RENDER, 2, "environments/x-.yaml"),
    Case("unicode-env", env_file("dév.yaml", "extends: base\n"), RENDER, 2, "environments/dév.yaml"),
    Case("backup-file-env", env_file("dev.yaml.bak", "extends: base\n"), CHECK, 2, "environments/dev.yaml.bak"),
    Case("upper-layer", env_file("_Base.yaml", "{}\n"), RENDER, 2, "environments/_Base.yaml"),
    Case("folder-env", folder("environments/x.yaml"), RENDER, 2, "environments/x.yaml", "not a regular file"),
    Case("fifo-env", fifo("environments/x.yaml"), RENDER, 2, "environments/x.yaml", "not a regular file",
         seconds=10),
    Case("fifo-dev", lambda r, o: ((r / DEV).unlink(), os.mkfifo(r / DEV)) and None, ("render", "dev"), 2, DEV,
         "not a regular file", seconds=10),
    Case("symlink-env-outside", symlink("environments/x.yaml", "{outside}/secret.yaml"), RENDER, 2,
         "environments/x.yaml", "outside the project"),
    Case("symlink-env-etc", symlink("environments/x.yaml", "/etc/passwd"), CHECK, 2, "environments/x.yaml"),
    Case("symlink-base-outside", symlink("environments/base.yaml", "{outside}/secret.yaml"), RENDER, 2,
         "environments/base.yaml"),
    Case("unknown-env-arg", nothing, ("render", "../x"), 2, "krc", "unknown environment"),
    Case("explain-path-arg", nothing, ("explain", "../../etc/passwd", "x"), 2, "krc", "unknown environment"),

    # ---- extends names a layer, never a path
    Case("extends-relative-path", dev_text("extends: base", "extends: ../../outside/secret"), RENDER, 2,
         f"{DEV}:3", "names a layer, not a path"),
    Case("extends-absolute-path", dev_text("extends: base", "extends: /etc/passwd"), RENDER, 2, f"{DEV}:3"),
    Case("extends-dotted", dev_text("extends: base", "extends: base/../base"), RENDER, 2, f"{DEV}:3"),
    Case("extends-upper", dev_text("extends: base", "extends: Base"), RENDER, 2, f"{DEV}:3"),
    Case("extends-missing", dev_text("extends: base", "extends: nothere"), RENDER, 2, f"{DEV}:3", "does not exist"),
    Case("extends-list", dev_text("extends: base", "extends: [base]"), RENDER, 2, f"{DEV}:3"),
    Case("extends-self", dev_text("extends: base", "extends: dev"), RENDER, 2, f"{DEV}:3", "cycle"),

    # ---- environment file contents
    Case("binary-env", dev_replace(b"\xff\xfe\x00\x01binary"), RENDER, 2, DEV, "not UTF-8"),
    Case("control-chars-env", dev_replace("a: \x07\n"), RENDER, 2, DEV),
    Case("alias-bomb-env", dev_replace(ALIAS_BOMB), RENDER, 2, f"{DEV}:", "KRC_MAX_YAML_NODES", seconds=5),
    Case("alias-bomb-in-raw", dev_append("x-bomb:\n" + "".join("  " + line + "\n" for line in
                                                               ALIAS_BOMB.splitlines())), RENDER, 2, f"{DEV}:",
         seconds=5),
    Case("deep-flow-nesting", dev_replace("a: " + "[" * 10000 + "]" * 10000 + "\n"), RENDER, 2, f"{DEV}:1:",
         "KRC_MAX_YAML_DEPTH", seconds=5),
    Case("deep-block-nesting", dev_replace("".join("  " * i + f"k{i}:\n" for i in range(150)) + "  " * 150 + "v\n"),
         RENDER, 2, f"{DEV}:", "nesting"),
    Case("custom-tag", dev_append("namespace2: !foo x\n"), RENDER, 2, f"{DEV}:", "tag"),
    Case("python-tag", dev_replace("a: !!python/object/apply:os.system ['touch /tmp/krc-pwned']\n"), RENDER, 2,
         f"{DEV}:1:"),
    Case("merge-key", dev_append("x: &x {a: 1}\ny:\n  <<: *x\n"), RENDER, 2, f"{DEV}:", "merge keys"),
    Case("duplicate-key", dev_append("cpuOnly: false\n"), RENDER, 2, f"{DEV}:", "duplicate key"),
    Case("two-documents", dev_append("---\na: 1\n"), RENDER, 2, f"{DEV}:1:1", "several"),
    Case("top-level-list", dev_replace("- a\n- b\n"), RENDER, 2, f"{DEV}:1:1", "YAML map"),
    Case("top-level-scalar", dev_replace("hello\n"), RENDER, 2, f"{DEV}:1:1", "YAML map"),
    Case("complex-key", dev_append("? [a, b]\n: 1\n"), RENDER, 2, f"{DEV}:", "scalars"),
    Case("tab-indent", dev_replace("a:\n\tb: 1\n"), RENDER, 2, f"{DEV}:2:", "invalid YAML"),
    Case("oversize-env", dev_append("# " + "x" * (1 << 20) + "\n"), RENDER, 2, DEV, "KRC_MAX_ENVIRONMENT_BYTES"),
    Case("lowered-size-limit", nothing, RENDER, 2, "environments/dev.yaml", "KRC_MAX_ENVIRONMENT_BYTES",
         env={"KRC_MAX_ENVIRONMENT_BYTES": "100"}),
    Case("bad-limit-variable", nothing, RENDER, 2, "krc", "KRC_MAX_YAML_DEPTH", env={"KRC_MAX_YAML_DEPTH": "lots"}),
    Case("bad-jobs-variable", nothing, RENDER, 2, "krc", "KRC_JOBS='0' is not a positive whole number",
         env={"KRC_JOBS": "0"}),
    Case("chart-name-traversal", dev_append("operator:\n  chart: {name: ../../../tmp/x}\n"), VENDOR, 2, f"{DEV}:"),
    Case("chart-version-traversal", dev_append("operator:\n  chart: {version: ../../../tmp/x}\n"), VENDOR, 2,
         f"{DEV}:"),
    Case("chart-version-not-semver", dev_append("operator:\n  chart: {version: '1.7'}\n"), RENDER, 2, f"{DEV}:"),
    Case("chart-name-upper", dev_append("operator:\n  chart: {name: KubeRay}\n"), RENDER, 2, f"{DEV}:"),
    Case("gate-key-newline", dev_append('operator:\n  featureGates: {"X\\nimage: {repository: evil}": true}\n'),
         RENDER, 2, f"{DEV}:"),
    Case("repository-bad-url", lambda r, o: unvendor(r), VENDOR, 2, "krc", "not a valid URL",
         env={"KRC_CHART_REPOSITORY": "http://[::1"}),
    Case("repository-ftp", lambda r, o: unvendor(r), VENDOR, 2, "krc", "unsupported chart repository URL",
         env={"KRC_CHART_REPOSITORY": "ftp://example.com/charts"}),

    # ---- templates: sandboxed, confined
    Case("jinja-popen", jinja_object("{{ cycler.__init__.__globals__.os.popen('touch {outside}/pwned').read() }}"),
         RENDER, 2, "templates/objects/evil.yaml.j2", "sandbox"),
    Case("jinja-subclasses", jinja_object("{{ ''.__class__.__mro__[1].__subclasses__() }}"), RENDER, 2,
         "templates/objects/evil.yaml.j2"),
    Case("jinja-globals-of-filter", jinja_object("{{ (env | attr('__class__')).__init__.__globals__ }}"), RENDER,
         2, "templates/objects/evil.yaml.j2"),
    Case("jinja-mutation", jinja_object("{{ env.clusters.append(1) }}"), RENDER, 2,
         "templates/objects/evil.yaml.j2", "sandbox"),
    Case("jinja-huge-range", jinja_object("{% for i in range(10**10) %}{{ i }}{% endfor %}"), RENDER, 2,
         "templates/objects/evil.yaml.j2", "KRC_JINJA_MAX_RANGE", seconds=5),
    # time bounds: the lowest bound (1 s) and one environment, so the guard trips once, soon
    Case("jinja-nested-loops", jinja_object("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}"
                                            "{% endfor %}"), RENDER + ("dev",), 2, "templates/objects/evil.yaml.j2",
         "KRC_TEMPLATE_SECONDS", seconds=8, env={"KRC_TEMPLATE_SECONDS": "1"}),
    Case("jinja-include-outside", jinja_object("{% include '../../outside/secret.yaml' %}"), RENDER, 2,
         "templates/objects/evil.yaml.j2", "not found"),
    Case("jinja-include-absolute", jinja_object("{% include '/etc/passwd' %}"), RENDER, 2,
         "templates/objects/evil.yaml.j2"),
    Case("jinja-include-link", lambda r, o: (symlink("templates/lib/leak.txt", "{outside}/secret.yaml")(r, o),
                                             jinja_object("{% include 'lib/leak.txt' %}")(r, o)) and None,
         RENDER, 2, "templates/lib/leak.txt", "outside the project"),
    Case("jinja-divide-by-zero", jinja_object("{{ 1 / 0 }}"), RENDER, 2, "templates/objects/evil.yaml.j2"),
    Case("jinja-syntax", jinja_object("{% if %}"), RENDER, 2, "templates/objects/evil.yaml.j2"),
    # what operators and calls build is bounded (KRC_JINJA_MAX_SIZE): never a MemoryError, never gigabytes
    Case("jinja-huge-repeat", jinja_object("{{ 'x' * 10**12 }}"), RENDER, 2, "templates/objects/evil.yaml.j2:6",
         "KRC_JINJA_MAX_SIZE", seconds=10),
    Case("jinja-repeat-past-bound", jinja_object("{{ 'x' * 1000 }}"), RENDER, 2, "templates/objects/evil.yaml.j2",
         "KRC_JINJA_MAX_SIZE", env={"KRC_JINJA_MAX_SIZE": "999"}),
    Case("jinja-huge-list", jinja_object("{{ ([1] * 10**10) | length }}"), RENDER, 2,
         "templates/objects/evil.yaml.j2", "KRC_JINJA_MAX_SIZE", seconds=10),
    Case("jinja-huge-power", jinja_object("{{ 7 ** (10 ** 10) }}"), RENDER, 2, "templates/objects/evil.yaml.j2",
         "KRC_JINJA_MAX_SIZE", seconds=10),
    Case("jinja-huge-pad", jinja_object("{{ 'x'.ljust(10**12) }}"), RENDER, 2, "templates/objects/evil.yaml.j2",
         "KRC_JINJA_MAX_SIZE", seconds=10),
    Case("jinja-doubling-macro", jinja_object("{% macro d(s, n) %}{% if n %}{{ d(s ~ s, n - 1) }}{% else %}"
                                              "{{ s | length }}{% endif %}{% endmacro %}{{ d('x', 60) }}"), RENDER, 2,
         "templates/objects/evil.yaml.j2", "KRC_JINJA_MAX_SIZE", seconds=20),
    Case("jsonnet-importstr-etc", template("objects/evil.jsonnet", "[{apiVersion: 'v1', kind: 'ConfigMap', "
                                           "metadata: {name: 'x'}, data: {p: importstr '/etc/passwd'}}]"),
         RENDER, 2, "templates/objects/", "leaves templates/"),
    Case("jsonnet-import-outside", template("objects/evil.jsonnet", "import '../../../outside/secret.jsonnet'"),
         RENDER, 2, "templates/objects/", "leaves templates/"),
    Case("jsonnet-import-link", lambda r, o: (symlink("templates/lib/leak.libsonnet", "{outside}/secret.jsonnet")
                                              (r, o), template("objects/evil.jsonnet",
                                                               "import '../lib/leak.libsonnet'")(r, o)) and None,
         RENDER, 2, "templates/", "leaves templates/"),
    Case("jsonnet-import-fifo", lambda r, o: (fifo("templates/lib/wait.libsonnet")(r, o), template(
        "objects/evil.jsonnet", "import '../lib/wait.libsonnet'")(r, o)) and None, RENDER, 2, "templates/",
         "FIFO", seconds=10),
    Case("jsonnet-recursion", template("objects/evil.jsonnet", "local f(n) = f(n + 1); f(0)"), RENDER, 2,
         "templates/objects/evil.jsonnet", "KRC_JSONNET_MAX_STACK"),
    # 10^10 additions (hours), in little memory; krc gives up on it at the bound and exits, which ends it
    Case("jsonnet-long-loop", template("objects/evil.jsonnet",
                                       "std.foldl(function(a, i) a + std.foldl(function(x, y) x + y, "
                                       "std.range(0, 100000), 0), std.range(0, 100000), 0)"),
         RENDER + ("dev",), 2, "templates/objects/", "KRC_TEMPLATE_SECONDS", seconds=6,
         env={"KRC_TEMPLATE_SECONDS": "1"},
         process=True),
    Case("jsonnet-error", template("objects/evil.jsonnet", "error 'boom'"), RENDER, 2,
         "templates/objects/evil.jsonnet:1", "boom"),
    # go-jsonnet has no memory bound of its own: krc watches what the evaluation adds (KRC_JSONNET_MEMORY_MB) and
    # stops there, naming the templates, instead of a Go abort (exit 134) or the machine's OOM killer
    Case("jsonnet-doubling-string", template("objects/evil.jsonnet",
                                             "local d(s, n) = if n == 0 then s else d(s + s, n - 1); "
                                             "[{apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'x'}, "
                                             "data: {x: std.length(d('x', 40))}}]"),
         RENDER + ("dev",), 2, "templates/objects/", "KRC_JSONNET_MEMORY_MB", seconds=30,
         env={"KRC_JSONNET_MEMORY_MB": "256"}, process=True),
    Case("jsonnet-huge-array", template("objects/evil.jsonnet",
                                        "[{apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'x'}, "
                                        "data: {x: std.length(std.makeArray(100000000, function(i) i))}}]"),
         RENDER + ("dev",), 2, "templates/objects/evil.jsonnet", "KRC_JSONNET_MEMORY_MB", seconds=30,
         env={"KRC_JSONNET_MEMORY_MB": "256"}, process=True),
    Case("template-link-outside", symlink("templates/objects/evil.jsonnet", "{outside}/secret.jsonnet"), RENDER, 2,
         "templates/objects/evil.jsonnet", "outside"),
    Case("object-name-traversal", jsonnet_object(name="../../../tmp/x"), RENDER, 2, "templates/objects/evil.jsonnet",
         "object name"),
    Case("object-name-newline", jsonnet_object(name="a\nkind: Secret"), RENDER, 2, "templates/objects/evil.jsonnet"),
    Case("object-kind-traversal", jsonnet_object(kind="../Evil"), RENDER, 2, "templates/objects/evil.jsonnet",
         "not a Kubernetes kind"),
    Case("object-namespace-traversal", jsonnet_object(namespace="../../x"), GOLDEN, 2,
         "templates/objects/evil.jsonnet", "namespace"),
    Case("object-name-dot", jsonnet_object(name="."), RENDER, 2, "templates/objects/evil.jsonnet"),
    Case("object-metadata-list", template("objects/evil.jsonnet", "[{apiVersion: 'v1', kind: 'ConfigMap', "
                                          "metadata: ['x']}]"), RENDER, 2, "templates/objects/evil.jsonnet"),
    Case("values-template-missing", lambda r, o: (r / "templates/values/kuberay-operator.jsonnet").unlink(),
         RENDER, 2, "krc", "missing templates/values"),

    Case("argocd-crds-outside", dev_text(
        "  destination: {server: https://kubernetes.default.svc}",
        "  destination: {server: https://kubernetes.default.svc}\n  crds: ../../outside"), RENDER, 2, f"{DEV}:",
         "outside the project"),
    Case("argocd-crds-deep", lambda r, o: (dev_text("  destination: {server: https://kubernetes.default.svc}",
                                                    "  destination: {server: https://kubernetes.default.svc}\n"
                                                    "  crds: argocd-crds.yaml")(r, o),
                                           (r / "argocd-crds.yaml").write_text("a: " + "[" * 5000 + "]" * 5000))
         and None, RENDER, 2, "argocd-crds.yaml:1:", "KRC_MAX_YAML_DEPTH"),
    Case("policy-runaway-list", lambda r, o: (r / "policies" / "evil.cue").write_text(
        'package krc\nimport "list"\nhuge: [for i in list.Range(0, 100000000, 1) {"x\\(i)"}]\n'), ("policy",), 2,
         "policies/", "KRC_ENGINE_MEMORY_MB", seconds=60, env={"KRC_ENGINE_MEMORY_MB": "128"}, process=True),
    Case("policy-link-outside", symlink("policies/leak.cue", "{outside}/secret.yaml"), ("policy",), 2,
         "policies/leak.cue", "outside the project"),

    # ---- output folders: real folders inside the project only
    Case("rendered-link-outside", symlink("rendered", "{outside}"), RENDER, 2, "rendered", "symbolic link"),
    Case("rendered-env-link-outside", symlink("rendered/dev", "{outside}/keep"), RENDER, 2, "rendered/dev",
         "symbolic link"),
    # without policies/, so `krc golden` reaches its write without a CUE engine run first
    Case("golden-env-link-outside", lambda r, o: (without_policies(r, o), symlink("golden/dev", "{outside}/keep")(
        r, o)) and None, GOLDEN, 2, "golden/dev", "symbolic link"),
    Case("golden-link-outside-check", symlink("golden", "{outside}"), CHECK, 2, "golden", "symbolic link"),
    Case("rendered-link-to-golden", symlink("rendered", "{root}/golden"), RENDER, 2, "rendered", "symbolic link"),
    Case("rendered-is-a-file", lambda r, o: (__import__("shutil").rmtree(r / "rendered"),
                                             (r / "rendered").write_text("x")) and None, RENDER, 2, "rendered",
         "not a folder"),
    Case("rendered-env-is-a-file", lambda r, o: (__import__("shutil").rmtree(r / "rendered", ignore_errors=True),
                                                 (r / "rendered").mkdir(),
                                                 (r / "rendered" / "dev").write_text("x")) and None, RENDER, 2,
         "rendered/dev", "not a folder"),
    Case("golden-file-link", symlink("golden/dev/manifests/leak.yaml", "/etc/passwd"), DIFF, 2,
         "golden/dev/manifests/leak.yaml", "link"),
    Case("golden-binary-file", golden_file("dev/manifests/namespace-ray-demo.yaml", b"\xff\xfe\x00garbage"), DIFF,
         2, "golden/dev/manifests/namespace-ray-demo.yaml", "UTF-8"),
    Case("golden-alias-bomb", golden_file("dev/manifests/namespace-ray-demo.yaml", ALIAS_BOMB.encode()), DIFF, 2,
         "golden/dev/manifests/namespace-ray-demo.yaml", "KRC_MAX_YAML_NODES", seconds=5),
    Case("golden-python-tag", golden_file("dev/manifests/namespace-ray-demo.yaml", b"a: !!python/name:os.system\n"),
         DIFF, 2, "golden/dev/manifests/namespace-ray-demo.yaml"),
    Case("golden-fifo", fifo("golden/dev/manifests/wait.yaml"), CHECK, 2, "golden/dev/manifests/wait.yaml",
         seconds=10),

    # ---- vendored charts, the lock, chart repositories and archives
    Case("lock-entry-without-version", lock_text("charts:\n- name: kuberay-operator\n  digest: abc\n"), RENDER, 2,
         "vendor/charts.lock.yaml", "version"),
    Case("lock-not-a-list", lock_text("charts: 5\n"), RENDER, 2, "vendor/charts.lock.yaml"),
    Case("lock-binary", lambda r, o: (r / "vendor/charts.lock.yaml").write_bytes(b"\xff\xfe") and None, RENDER, 2,
         "vendor/charts.lock.yaml"),
    Case("lock-version-traversal", lock_text(f"charts:\n- name: kuberay-operator\n  version: ../../x\n  digest: "
                                             f"{'a' * 64}\n"), RENDER, 2, "vendor/charts.lock.yaml"),
    Case("vendored-archive-garbage", lambda r, o: (r / "vendor/charts/kuberay-operator-1.7.0.tgz").write_bytes(b"x"),
         RENDER, 2, "krc", "locked digest"),
    Case("vendored-archive-link", symlink("vendor/charts/kuberay-operator-1.7.0.tgz", "{outside}/secret.yaml"),
         RENDER, 2, "krc", "not a regular file"),
    Case("index-entries-string", index_text("apiVersion: v1\nentries: {kuberay-operator: oops}\n"), VENDOR, 2, "krc",
         "list of chart versions"),
    Case("index-entries-strings", index_text("entries: {kuberay-operator: [a, b]}\n"), VENDOR, 2, "krc"),
    Case("index-binary", index_text(b"\x1f\x8b\x08\x00\xff\xfe"), VENDOR, 2, "krc", "not UTF-8"),
    Case("index-alias-bomb", index_text(ALIAS_BOMB), VENDOR, 2, "index.yaml", "KRC_MAX_YAML_NODES", seconds=5),
    Case("index-no-entries", index_text("apiVersion: v1\n"), VENDOR, 2, "krc", "no 'entries'"),
    Case("index-missing-version", index_text("entries: {kuberay-operator: [{version: 9.9.9}]}\n"), VENDOR, 2, "krc",
         "is not in"),
    Case("archive-traversal", crafted_chart(chart_members([Member("kuberay-operator/../../evil", b"x")])), VENDOR,
         2, "krc", "'..'"),
    Case("archive-absolute", crafted_chart(chart_members([Member("/tmp/evil", b"x")])), VENDOR, 2, "krc",
         "absolute"),
    Case("archive-symlink", crafted_chart(chart_members([Member("kuberay-operator/link", kind=tarfile.SYMTYPE,
                                                                link="/etc/passwd")])), VENDOR, 2, "krc", "link"),
    Case("archive-hardlink", crafted_chart(chart_members([Member("kuberay-operator/hard", kind=tarfile.LNKTYPE,
                                                                 link="kuberay-operator/Chart.yaml")])), VENDOR, 2,
         "krc", "link"),
    Case("archive-device", crafted_chart(chart_members([Member("kuberay-operator/dev", kind=tarfile.CHRTYPE)])),
         VENDOR, 2, "krc", "device"),
    Case("archive-fifo", crafted_chart(chart_members([Member("kuberay-operator/fifo", kind=tarfile.FIFOTYPE)])),
         VENDOR, 2, "krc", "FIFO"),
    Case("archive-expands-too-far", crafted_chart(chart_members([Member("kuberay-operator/big", b"\0" * 200_000)]),
                                                  env={"KRC_MAX_ARCHIVE_BYTES": "100000"}), VENDOR, 2, "krc",
         "KRC_MAX_ARCHIVE_BYTES"),
    Case("archive-two-roots", crafted_chart(chart_members() + chart_members(root="other")), VENDOR, 2, "krc",
         "exactly one chart"),
    Case("archive-binary-chart-yaml", crafted_chart([Member("kuberay-operator/Chart.yaml", b"\xff\xfe")]), VENDOR,
         2, "krc", "UTF-8"),
    Case("archive-not-gzip", crafted_chart(archive=b"not a gzip stream at all"), VENDOR, 2, "krc",
         "not a readable chart archive"),
    Case("archive-truncated", truncated_chart, VENDOR, 2, "krc", "not a readable chart archive"),

    # ---- Argo CD plugin parameters: names DNS-1123, values bounded; errors print nothing on stdout
    Case("param-cluster-traversal", nothing, GENERATE + ("--environment", "dev", "--cluster", "Bad Cluster/../x"), 2,
         "krc", "DNS-1123"),
    Case("param-cluster-newline", nothing, GENERATE + ("--environment", "dev"), 2, "krc", "newline",
         env=params([{"name": "cluster", "string": "a\nb"}])),
    Case("param-cluster-long", nothing, GENERATE + ("--environment", "dev"), 2, "krc", "KRC_MAX_PARAMETER_BYTES",
         env=params([{"name": "cluster", "string": "a" * 1000}])),
    Case("param-json-huge", nothing, GENERATE + ("--environment", "dev"), 2, "krc", "ARGOCD_APP_PARAMETERS is",
         env=params([{"name": "cluster", "string": "a" * 120_000}])),
    Case("param-environment-dotdot", nothing, GENERATE, 2, "krc", "DNS-1123",
         env={"ARGOCD_ENV_KRC_ENVIRONMENT": ".."}),
    Case("param-environment-upper", nothing, GENERATE, 2, "krc", "DNS-1123", env={"PARAM_ENVIRONMENT": "DEV"}),
    Case("param-json-broken", nothing, GENERATE, 2, "krc", "not valid JSON", env={"ARGOCD_APP_PARAMETERS": "[{"}),
    Case("param-json-not-list", nothing, GENERATE, 2, "krc", "JSON array", env={"ARGOCD_APP_PARAMETERS": "{}"}),
    Case("param-selection-bad", nothing, GENERATE + ("--environment", "dev"), 2, "krc", "use one of",
         env=params([{"name": "crds", "string": "all"}])),
    Case("param-map-value", nothing, GENERATE + ("--environment", "dev"), 2, "krc", "string parameter",
         env=params([{"name": "cluster", "map": {"a": "b"}}])),
    # encodings (issue 35): the process environment holds bytes that are not UTF-8 as lone surrogates
    # (surrogateescape), as os.environ gives them to krc
    Case("param-env-not-utf8", nothing, GENERATE, 2, "krc", "ARGOCD_ENV_KRC_ENVIRONMENT holds the byte 0xff",
         env={"ARGOCD_ENV_KRC_ENVIRONMENT": "d\udcffev"}),
    Case("param-flat-not-utf8", nothing, GENERATE + ("--environment", "dev"), 2, "krc", "not UTF-8",
         env={"PARAM_CLUSTER": "a\udce9b"}),
    Case("param-json-not-utf8", nothing, GENERATE, 2, "krc", "ARGOCD_APP_PARAMETERS holds the byte 0xff",
         env={"ARGOCD_APP_PARAMETERS": '[{"name": "environment", "string": "d\udcffev"}]'}),
    Case("param-json-lone-surrogate", nothing, GENERATE + ("--environment", "dev"), 2, "krc", "lone surrogate",
         env=params([{"name": "cluster", "string": "a\ud800"}])),
    Case("param-json-deep", nothing, GENERATE + ("--environment", "dev"), 2, "krc", "too deep", seconds=5,
         env={"ARGOCD_APP_PARAMETERS": "[" * 20_000 + "]" * 20_000}),
    Case("param-json-deep-objects", nothing, GENERATE + ("--environment", "dev"), 2, "krc", "too deep", seconds=5,
         env={"ARGOCD_APP_PARAMETERS": '{"a":' * 10_000 + "1" + "}" * 10_000}),
    Case("base-golden-name-not-utf8", committed_non_utf8_golden_name, DIFF + ("dev", "--base", "HEAD"), 2,
         "golden/dev/manifests/\\xff.yaml", "hold the same object"),

    # ---- the terminal (issue 35): what a file holds never reaches it as control characters
    Case("escape-sequence-key", dev_append('"\\e]0;pwned\\a\\e[2J\\e[31m": 1\n'), RENDER, 2, f"{DEV}:",
         "unknown key '\\x1b]0;pwned\\x07\\x1b[2J\\x1b[31m'"),
    Case("bidi-override-key", dev_append('"\\u202eevil\\u2066": 1\n'), RENDER, 2, f"{DEV}:",
         "unknown key '\\u202eevil\\u2066'"),
    Case("newline-key", dev_append('"a\\nenvironments/dev.yaml:1:1: error: forged": 1\n'), RENDER, 2, f"{DEV}:",
         "unknown key 'a\\nenvironments/dev.yaml:1:1: error: forged'"),

    # ---- one YAML entry point (issue 35): nested YAML inside a manifest goes through the bounded loader too
    Case("runtime-env-yaml-deep", deep_runtime_env, ("lint", "{root}/deep-job.yaml"), 1, "deep-job.yaml:7:",
         "KRC_MAX_YAML_DEPTH", seconds=10),
]


def test_the_corpus_is_large_enough():
    assert len(CASES) >= 80
    assert len({case.id for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_hostile_input(case: Case, target: tuple[Project, Path]):
    project, outside = target
    extra = case.setup(project.root, outside)
    env = {**(extra if isinstance(extra, dict) else {}), **case.env}
    before = snapshot(project.root, outside)
    started = time.monotonic()
    if case.process:
        done = subprocess.run([str(KRC), "--project", str(project.root), *case.args], env={**os.environ, **env},
                              capture_output=True, text=True, timeout=120)
        exit_code, stdout, output = done.returncode, done.stdout, done.stdout + done.stderr
    else:
        result = run(project.root, [arg.replace("{root}", str(project.root)) for arg in case.args], env)
        assert result.exception is None or isinstance(result.exception, SystemExit), result.output
        exit_code, stdout, output = result.exit_code, result.stdout, result.output
    elapsed = time.monotonic() - started
    assert "Traceback" not in output and "internal error" not in output, output
    assert "\x1b" not in output and "\x07" not in output, "a control character reached the terminal"
    assert exit_code == case.exit, output
    # a guard against hangs, not a speed measurement (speed is bench/'s): generous on a loaded machine
    assert elapsed < max(case.seconds, 120), f"took {elapsed:.1f}s"
    error_lines = [line for line in output.splitlines() if re.search(r"(^|\s)error:? ", line)]
    assert error_lines, output
    assert any(case.where in line for line in error_lines), output
    assert case.says in output, output
    if case.args[:2] == GENERATE:
        assert stdout == "", "a failing plugin run prints nothing on stdout"
    assert changed_parts(before, project.root, outside) == [], "a failing run changed files"
    assert not (outside / "pwned").exists()

"""`helm template` reads the chart unpacked once per process (faster than unpacking the archive each time): the
same output as from the archive, and an archive that does not match its locked digest is never unpacked."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from compiler.charts import helm_template, vendored
from compiler.charts.helm_pin import find_helm, read_helm_pin
from compiler.problems import Location
from compiler.project import Project

VALUES = {"singleNamespaceInstall": True, "watchNamespace": ["ray-a", "ray-b"], "crNamespacedRbacEnable": True}


@pytest.mark.parametrize("version", ["1.6.2", "1.7.0"])
def test_unpacked_chart_renders_what_the_archive_renders(project: Project, version: str):
    pin = read_helm_pin(project.vendor_dir / vendored.LOCK_NAME)
    archive = vendored.archive_path(project.vendor_dir, "kuberay-operator", version)
    digest = vendored.read_lock(project.vendor_dir)[("kuberay-operator", version)]
    request = helm_template.TemplateRequest(archive, digest, "kuberay-operator", "ray-ops", "1.33", VALUES)
    folder = helm_template._chart_folder(request)
    assert folder.is_dir() and (folder / "Chart.yaml").is_file()
    from_archive = helm_template.TemplateRequest(archive, "", "kuberay-operator", "ray-ops", "1.33", VALUES)
    where = Location("environments/x.yaml")
    helm = find_helm(pin)
    assert helm_template._run_helm(helm, request, where) == helm_template._run_helm(helm, from_archive, where)


def test_an_archive_with_another_digest_is_not_unpacked(project: Project, tmp_path: Path):
    archive = vendored.archive_path(project.vendor_dir, "kuberay-operator", "1.7.0")
    copy = tmp_path / archive.name
    shutil.copy(archive, copy)
    request = helm_template.TemplateRequest(copy, "0" * 64, "kuberay-operator", "ray-ops", "1.33", {})
    assert helm_template._chart_folder(request) == copy

"""CRD upgrade comparison: what changes between two sets of CustomResourceDefinitions, and how risky it is."""
from .changes import CrdChange, Severity, has_breaking, severity_counts, sorted_changes
from .compare import compare_crds
from .report import FORMATS, format_changes, format_json, format_markdown, format_text, summary_line
from .sources import DEFAULT_REPOSITORY, chart_crd_records, load_crd_source

__all__ = ["CrdChange", "Severity", "has_breaking", "severity_counts", "sorted_changes", "compare_crds",
           "FORMATS", "format_changes", "format_json", "format_markdown", "format_text", "summary_line",
           "DEFAULT_REPOSITORY", "chart_crd_records", "load_crd_source"]

"""`krc diff`: the render compared with golden/ (or golden/ at a git ref) for review, object by object, with
KubeRay consequences, capacity at maximum scale, and the CRD upgrade gate first."""
from .approval import check_reason
from .approve import ApprovalWritten, write_approval
from .compare import (
    golden_source,
    pruned_objects,
    removed_environment,
    review_environment,
    with_check_changes,
    with_checks,
)
from .format_html import format_html
from .format_json import format_json
from .format_markdown import COMMENT_LIMIT, MARKDOWN_BUDGET, format_markdown
from .format_text import format_text
from .model import EnvironmentReview, FileChange, ObjectChange, Review
from .report_files import ReportTarget, report_targets, write_report

FORMATS = ("text", "markdown", "json", "html")


def format_review(review: Review, output_format: str) -> str:
    if output_format == "json":
        return format_json(review)
    if output_format == "markdown":
        return format_markdown(review)
    if output_format == "html":
        return format_html(review)
    return format_text(review)


__all__ = ["ApprovalWritten", "check_reason", "COMMENT_LIMIT", "EnvironmentReview", "FileChange", "format_html",
           "format_json", "format_markdown", "format_review", "format_text", "FORMATS", "golden_source",
           "MARKDOWN_BUDGET", "ObjectChange", "pruned_objects", "removed_environment", "report_targets",
           "ReportTarget", "Review", "review_environment", "with_check_changes", "with_checks", "write_approval",
           "write_report"]

"""`krc diff`: the render compared with golden/ (or golden/ at a git ref) for review, object by object, with
KubeRay consequences, capacity at maximum scale, and the CRD upgrade gate first.

Names are imported from their module when first used (PEP 562), as in compiler.pipeline: `krc render` and `krc
check` read golden/ through `review.golden_source` and name `EnvironmentReview` in types, and do not load the
review's comparison and formatters for that.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .. import lazy_exports

if TYPE_CHECKING:  # the names as the type checker and the import-layer contract see them
    from .approval import check_reason
    from .approve import ApprovalWritten, write_approval
    from .compare import pruned_objects, removed_environment, review_environment, with_check_changes, with_checks
    from .format_html import html_page
    from .format_markdown import COMMENT_LIMIT, MARKDOWN_BUDGET
    from .formats import FORMATS, format_review
    from .model import EnvironmentReview, FileChange, ObjectChange, Review
    from .report_files import ReportTarget, report_targets, write_report

# name -> the module (relative to this package) that defines it
_EXPORTS = {
    "check_reason": ".approval", "ApprovalWritten": ".approve", "write_approval": ".approve",
    "pruned_objects": ".compare", "removed_environment": ".compare", "review_environment": ".compare",
    "with_check_changes": ".compare", "with_checks": ".compare", "FORMATS": ".formats", "format_review": ".formats",
    "COMMENT_LIMIT": ".format_markdown", "MARKDOWN_BUDGET": ".format_markdown", "html_page": ".format_html",
    "EnvironmentReview": ".model", "FileChange": ".model", "ObjectChange": ".model", "Review": ".model",
    "ReportTarget": ".report_files", "report_targets": ".report_files", "write_report": ".report_files",
}
__all__ = ["ApprovalWritten", "check_reason", "COMMENT_LIMIT", "EnvironmentReview", "FileChange", "FORMATS",
           "format_review", "html_page", "MARKDOWN_BUDGET", "ObjectChange", "pruned_objects",
           "removed_environment", "report_targets", "ReportTarget", "Review", "review_environment",
           "with_check_changes", "with_checks", "write_approval", "write_report"]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)

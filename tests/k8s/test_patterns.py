"""Schema patterns and name checks match as the API server does: `$` is the end of the text, not a final newline."""
from __future__ import annotations

import pytest

from compiler.k8s import names
from compiler.k8s.patterns import end_of_text_anchors, schema_regex


@pytest.mark.parametrize(("pattern", "read_as"), [
    ("^[a-z]+$", r"^[a-z]+\Z"),
    ("a$|^b$", r"a\Z|^b\Z"),
    (r"^\$[0-9]+$", r"^\$[0-9]+\Z"),  # an escaped dollar is a dollar
    ("^[$a]+$", r"^[$a]+\Z"),  # so is one in a character class
    ("^[]$]+$", r"^[]$]+\Z"),  # `]` first in a class is a literal: the class goes on
    ("^[^]$]$", r"^[^]$]\Z"),
    ("no anchor", "no anchor"),
])
def test_dollar_anchors_are_read_as_the_end_of_the_text(pattern: str, read_as: str):
    assert end_of_text_anchors(pattern) == read_as


def test_a_final_newline_does_not_satisfy_an_anchored_pattern():
    pattern = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
    assert schema_regex(pattern).search("ray") and not schema_regex(pattern).search("ray\n")
    assert schema_regex("^a+").search("aa\n")  # unanchored at the end: still found, as the API server finds it


@pytest.mark.parametrize("check", [names.dns1123_subdomain_errors, names.dns1035_label_errors,
                                   names.dns1123_label_errors, names.qualified_name_errors,
                                   names.label_value_errors])
def test_names_ending_in_a_newline_are_not_kubernetes_names(check):
    assert check("ray") == []
    assert check("ray\n") != []

"""The operator versions a rule applies to (About.versions, compiler/rules/support/versions.py): comparisons of
release numbers, decided as PEP 440 decides them. `packaging`, the reference implementation, is the judge here;
krc itself no longer loads it (its specifier grammar was the slowest regular expression of a compiling command)."""
from __future__ import annotations

import itertools

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from compiler.rules import RULES
from compiler.rules.support.versions import applies_to, parse_version, version_clauses

DECLARED = sorted({rule.ABOUT.versions for rule in RULES.values() if rule.ABOUT.versions})
SPECS = [*DECLARED, ">=1.5,<1.7", "==1.6", "==1.6.2", "!=1.6.2", ">1.7", "<=1.6.2", "<1.7", ">1.6.2", ">=2",
         "<1.7.0,>=1.6"]
VERSIONS = ["1.5.2", "1.6", "1.6.0", "1.6.2", "1.7.0", "1.7", "v1.7.1", "1.8.0-rc1", "2.0", "0.9"]


def test_every_rule_declares_versions_krc_reads():
    assert DECLARED, "no rule declares versions: the comparison below holds nothing to account"
    for versions in DECLARED:
        assert version_clauses(versions)


@pytest.mark.parametrize(("versions", "version"), list(itertools.product(SPECS, VERSIONS)))
def test_a_rule_applies_where_pep_440_says_so(versions: str, version: str):
    parsed = parse_version(version)
    assert parsed is not None
    release = ".".join(str(number) for number in parsed)  # what the rules compare: the release
    assert applies_to(versions, version) == (Version(release) in SpecifierSet(versions))


def test_a_version_that_does_not_parse_counts_as_matching():
    assert applies_to(">=1.7", "main") and applies_to("", "1.5.2")


@pytest.mark.parametrize("versions", ["~=1.6", ">=1.6.*", "1.6", ">=1.x", ">=1.6,", "=>1.6", "===1.6"])
def test_other_specifiers_are_refused(versions: str):
    with pytest.raises(ValueError, match="bad version spec"):
        applies_to(versions, "1.6.2")

"""The layout the import-layer contract (pyproject.toml, `make check`) cannot see: no imports inside functions,
and a rule registry that holds every rule module."""
from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from compiler import pipeline
from compiler.rules import RULES, SEVERITIES
from compiler.settings import limits, variables

PACKAGE = Path(__file__).resolve().parents[1] / "compiler"


def modules_outside(*homes: str) -> Iterator[tuple[str, str]]:
    """(path below compiler/, text) of every module but the homes of one concern (paths, or folders ending '/'),
    for the tests that look for that concern anywhere else."""
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if not any(relative == home or (home.endswith("/") and relative.startswith(home)) for home in homes):
            yield relative, path.read_text(encoding="utf-8")


def test_no_module_imports_inside_functions() -> None:
    """A function-level import hides a dependency from the layer contract (and usually dodges a cycle)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found += [f"{path.relative_to(PACKAGE)}:{inner.lineno}" for inner in ast.walk(node)
                          if isinstance(inner, (ast.Import, ast.ImportFrom))]
    assert found == []


def test_every_rule_module_is_registered_once_with_a_valid_severity() -> None:
    modules = {p.stem for p in (PACKAGE / "rules").glob("*.py")} - {"__init__", "rule"}
    assert {rule.__name__.rsplit(".", 1)[1] for rule in RULES.values()} == modules
    for rule_id, rule in RULES.items():
        assert rule.ABOUT.id == rule_id and rule.ABOUT.severity in SEVERITIES and rule.ABOUT.summary, rule_id
        assert "fail" in (rule.__doc__ or "").lower() and "pass" in (rule.__doc__ or "").lower(), rule_id


MAX_MODULE_LINES = 350  # "modules under ~300 lines": a module past this wants splitting by what it holds


def test_modules_stay_small() -> None:
    sizes = {str(p.relative_to(PACKAGE)): len(p.read_text(encoding="utf-8").splitlines())
             for p in sorted(PACKAGE.rglob("*.py"))}
    assert {path: n for path, n in sizes.items() if n > MAX_MODULE_LINES} == {}


# ---- one YAML entry point: krc's bounded loader (yamlio, with yaml_events, its event-level fast path) ------------

YAML_LOADER_FILES = {"yamlio.py", "yaml_events.py"}
# what reads YAML text into data, nodes, events or tokens: PyYAML's functions and every loader, parser and composer
YAML_READERS = {"load", "load_all", "safe_load", "safe_load_all", "full_load", "full_load_all", "unsafe_load",
                "unsafe_load_all", "compose", "compose_all", "parse", "scan", "Loader", "BaseLoader", "SafeLoader",
                "FullLoader", "UnsafeLoader", "CLoader", "CBaseLoader", "CSafeLoader", "CFullLoader",
                "CUnsafeLoader", "CParser", "Parser", "Composer", "Scanner", "Reader"}
YAML_READER_MODULES = {"yaml.loader", "yaml.cyaml", "yaml._yaml", "yaml.parser", "yaml.composer", "yaml.scanner",
                       "yaml.reader"}


def yaml_reads(source: str) -> list[int]:
    """Lines of `source` that parse YAML other than through yamlio: a PyYAML reader called or imported, the
    loader yamlio exports taken to call PyYAML with, or another YAML library."""
    tree = ast.parse(source)
    aliases = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
               for alias in node.names if alias.name == "yaml"}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases \
                and node.attr in YAML_READERS:
            found.append(node.lineno)
        elif isinstance(node, ast.Import) and any(a.name.split(".")[0] in ("ruamel", "strictyaml", "oyaml")
                                                  or a.name in YAML_READER_MODULES for a in node.names):
            found.append(node.lineno)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            names = {alias.name for alias in node.names}
            if module.split(".")[0] in ("ruamel", "strictyaml", "oyaml") \
                    or ((module == "yaml" or module in YAML_READER_MODULES) and names & (YAML_READERS | {"*"})) \
                    or (module.split(".")[-1] == "yamlio" and "SafeLoader" in names):
                found.append(node.lineno)
    return found


def test_all_yaml_is_read_through_the_bounded_loader() -> None:
    """PyYAML on its own has no depth or size bound: brackets nested 100,000 deep crash its C parser (a
    segmentation fault, exit 139) and an alias bomb fills memory. yamlio refuses both with krc's limits."""
    found = [f"{path.relative_to(PACKAGE)}:{line}" for path in sorted(PACKAGE.rglob("*.py"))
             if path.name not in YAML_LOADER_FILES or path.parent != PACKAGE / "documents"
             for line in yaml_reads(path.read_text(encoding="utf-8"))]
    assert found == [], "parse YAML with compiler.documents.yamlio (load, load_all, load_with_positions)"


def test_the_yaml_check_sees_each_way_round_the_loader() -> None:
    bad = ["import yaml\nyaml.load(t, Loader=yaml.SafeLoader)", "import yaml as y\ny.safe_load(t)",
           "import yaml\nyaml.load_all(t, yaml.CSafeLoader)", "from yaml import safe_load",
           "from yaml import CLoader as L", "from yaml.cyaml import CParser", "import yaml\nyaml.compose_all(t)",
           "from ..yamlio import SafeLoader", "from ruamel.yaml import YAML", "from yaml import *",
           "from yaml._yaml import CParser as P"]
    assert [source for source in bad if not yaml_reads(source)] == []
    assert yaml_reads("import yaml\nfrom . import yamlio\nyamlio.load(t)\nyaml.YAMLError\nyaml.dump(d)\n"
                      "from yaml._yaml import CEmitter") == []


# Where the process environment may be read: settings/variables.py (the one home of every variable), the CLI
# edge (Argo CD's ARGOCD_* parameters and terminal colours are the user's input there), and the runner that
# executes under Ray's own Python, outside krc's package.
ENVIRONMENT_READERS = {"settings/variables.py", "autoscaler/generator_runner.py"}


def test_the_environment_is_read_in_one_place() -> None:
    found = []
    for relative, text in modules_outside(*ENVIRONMENT_READERS, "cli/"):
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "putenv") \
                    and isinstance(node.value, ast.Name) and node.value.id == "os":
                found.append(f"{relative}:{node.lineno}")
    assert found == []


def test_every_variable_krc_reads_is_listed_once() -> None:
    assert not set(variables.VARIABLES) & {limit.variable for limit in limits.ALL}
    try:
        variables.value("KRC_NOT_A_SETTING")
    except KeyError as err:
        assert "compiler/settings/variables.py" in str(err)
    else:
        raise AssertionError("an unlisted variable was read")


def test_quantities_are_read_in_one_place() -> None:
    """k8s/quantities.py reads a Kubernetes quantity as apimachinery does; every other module asks it."""
    found = []
    for relative, text in modules_outside("k8s/quantities.py"):
        tree = ast.parse(text)
        found += [f"{relative}:{node.lineno}" for node in ast.walk(tree)
                  if isinstance(node, ast.FunctionDef) and node.name == "parse_quantity"]
        if "Ki|Mi|Gi" in text:  # a quantity's suffixes in a regular expression: a second parser
            found.append(relative)
    assert found == []


def test_every_variable_is_documented() -> None:
    """docs/reference.md lists settings/variables.py's variables; docs/security.md's table the bounds."""
    docs = PACKAGE.parent / "docs"
    reference, security = ((docs / name).read_text(encoding="utf-8") for name in ("reference.md", "security.md"))
    assert [name for name in variables.VARIABLES if f"`{name}`" not in reference] == []
    assert [limit.variable for limit in limits.ALL if f"`{limit.variable}`" not in security] == []


def test_list_items_are_named_in_one_place() -> None:
    """fieldpath.item_name and NAME_KEYS: one precedence (name, then groupName) wherever a list item is named."""
    found = []
    for relative, text in modules_outside("diagnostics/fieldpath.py"):
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Tuple) and {getattr(e, "value", None) for e in node.elts} == {"name", "groupName"}:
                found.append(f"{relative}:{node.lineno}")
            if isinstance(node, ast.BoolOp) and {_first_argument(v) for v in node.values} >= {"name", "groupName"}:
                found.append(f"{relative}:{node.lineno}")  # item.get("name") or item.get("groupName")
    assert found == []


def _first_argument(node: ast.expr) -> object:
    return getattr(node.args[0], "value", None) if isinstance(node, ast.Call) and node.args else None


def test_the_layer_contract_names_every_package_and_module() -> None:
    """A package the contract does not name could import anything: every top-level one has its layer."""
    text = (PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8")
    contract = text[text.index("layers = ["):]
    listed = set(re.findall(r"compiler\.[a-z0-9_]+", contract[:contract.index("]")]))
    present = {f"compiler.{p.parent.name}" for p in PACKAGE.glob("*/__init__.py")}
    assert sorted(present - listed) == [] and sorted(listed - present) == []


def test_every_module_lives_in_a_package() -> None:
    """compiler/ holds packages only: a newcomer reads the domain from its folder names."""
    assert sorted(p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py") == []


def test_every_name_the_pipeline_exports_resolves() -> None:
    """The pipeline imports its names when first used (PEP 562): a module moved without its entry would fail only
    when a command reached for that name."""
    assert [name for name in pipeline.__all__ if getattr(pipeline, name, None) is None] == []

"""The generator's one change to what Ray runs: jsonschema checks Ray's schema against its metaschema once, not
for every cluster (generator_runner.check_each_schema_once). Every config is still validated, with the same
errors, a broken schema is refused every time, and schemas Python holds equal but JSON Schema does not (1, True,
1.0) are not taken for each other; run in the Ray environment, with its own jsonschema."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

RUNNER_DIR = Path(__file__).resolve().parents[2] / "compiler" / "autoscaler"
REAL_ENVS = Path(os.environ["KRC_RAY_ENVS"])

CHECK = """
import json, sys
sys.path.insert(0, sys.argv[1])
import generator_runner, jsonschema
schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"enum": ["x", "y"]}},
          "required": ["a"], "additionalProperties": False}
instances = [{"a": 1}, {"a": "s"}, {"b": "z"}, {"a": 1, "b": "q"}, {"a": 1, "c": 2}, 5]
broken = {"type": 7}
# equal as Python compares them (1 == True == 1.0), not as JSON Schema does: each is a schema of its own
typed = [(1, {"enum": [1]}), (1, {"enum": [True]}), (True, {"enum": [1]}), (1, {"enum": [1.0]}), (1, {"enum": [1]})]

def outcomes(validate):
    found = []
    for instance, used in [(i, schema) for i in instances] + [({}, broken), ({}, broken)] + typed:
        try:
            validate(instance, json.loads(json.dumps(used)))  # a new dict each time, as Ray loads it
            found.append("valid")
        except Exception as err:
            found.append(f"{type(err).__name__}: {err}")
    return found

before = outcomes(jsonschema.validate)
calls = []
real_check = jsonschema.Draft202012Validator.check_schema.__func__
jsonschema.Draft202012Validator.check_schema = classmethod(lambda cls, s, *a, **k: (calls.append(1),
                                                                                    real_check(cls, s, *a, **k)))
generator_runner.check_each_schema_once(jsonschema)
after = outcomes(jsonschema.validate)
print(json.dumps({"same": before == after, "valid": after.count("valid"), "checks": len(calls)}))
"""


def test_rays_schema_is_checked_once_and_every_config_validated_as_before() -> None:
    python = REAL_ENVS / "2.58.0" / "bin" / "python"
    out = subprocess.run([str(python), "-I", "-c", CHECK, str(RUNNER_DIR)], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    # one check for the good schema, one for each try of the broken one (a failed check is not remembered), one
    # for each of the three enums told apart by type (the first used twice)
    assert out.strip() == '{"same": true, "valid": 4, "checks": 6}'

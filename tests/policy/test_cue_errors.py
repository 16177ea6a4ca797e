"""CUE's error report, as both engines print it, read into paths, messages and positions."""
from compiler.policy.cue_errors import CuePosition, parse_errors

REPORT = '''results.e0.p1."my.env".objects.0.spec: field activeDeadlineSeconds not allowed:
    ./check.cue:8:20
    ./policy/p1/deadline.cue:6:58
results.e1.p0.totalGpus: invalid value 39 (out of bound <=32):
    ./policy/p0/gpu.cue:22:33
expected '}', found 'EOF':
    ./policy/p2/broken.cue:5:1
results.e0.p0.x: incomplete value int
'''


def test_blocks_become_path_message_and_positions():
    errors = parse_errors(REPORT)
    assert [e.path for e in errors] == [("results", "e0", "p1", "my.env", "objects", 0, "spec"),
                                        ("results", "e1", "p0", "totalGpus"), (), ("results", "e0", "p0", "x")]
    assert errors[0].message == "field activeDeadlineSeconds not allowed"
    assert errors[0].positions == (CuePosition("./check.cue", 8, 20), CuePosition("./policy/p1/deadline.cue", 6, 58))
    assert errors[2].message == "expected '}', found 'EOF'"
    assert errors[3].positions == ()


def test_a_message_with_colons_and_quotes_is_not_taken_for_a_path():
    [error] = parse_errors('reference "env" not found:\n    ./policy/p0/a.cue:6:4\n')
    assert error.path == ()
    assert error.message == 'reference "env" not found'
    [error] = parse_errors('results.e0.p0.env.ray.image: invalid value "a: b" (out of bound =~"^x"):\n')
    assert error.path == ("results", "e0", "p0", "env", "ray", "image")
    assert error.message == 'invalid value "a: b" (out of bound =~"^x")'


def test_both_cue_styles_of_a_missing_field_read_as_missing(tmp_path):
    """CUE v0.4 says 'field x not allowed' at the parent; later versions 'field not allowed' at the field."""
    from compiler.policy import PolicyInput
    from compiler.policy.evaluate import _findings_each
    from compiler.policy.workspace import Policy, Workspace, wrap_policy
    from compiler.problems import Location

    text = ("// deadlines\npackage policy\n\n"
            "objects: [...{\n\tkind: string\n\tif kind == \"RayJob\" {spec: x: int}\n}]\n")
    policy = Policy("deadline", tmp_path / "deadline.cue", "policies/deadline.cue", "policy", text)
    written = Workspace((), (policy,), (wrap_policy(policy, 0, 1),))
    job = {"kind": "RayJob", "metadata": {"name": "train", "namespace": "ml"}, "spec": {}}
    item = PolicyInput("prod", {}, (job,), lambda path: Location("environments/prod.yaml", 40, 5))
    # line 7 of the workspace's copy is line 6 of the policy: krc's opening line comes before line 4
    old = parse_errors("krcPolicyResults.e0.p0.objects.0.spec: field activeDeadlineSeconds not allowed:\n"
                       "    ./policy_0.cue:7:58\n")
    new = parse_errors("krcPolicyResults.e0.p0.objects.0.spec.activeDeadlineSeconds: field not allowed:\n"
                       "    ./policy_0.cue:7:58\n")
    for errors in (old, new):
        [[problem]] = _findings_each(errors, written, [item])
        assert problem.message.startswith("environment prod: objects[RayJob/train].spec.activeDeadlineSeconds: "
                                          "missing: the policy requires it")
        assert problem.location == Location("environments/prod.yaml", 40, 5)
        assert "policy policies/deadline.cue:6:58" in problem.message
        assert (problem.object, problem.path) == ("RayJob/ml/train", "objects[0].spec.activeDeadlineSeconds")
        assert problem.rule == "policy/deadline"

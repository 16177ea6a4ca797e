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

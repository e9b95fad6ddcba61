"""The YAML corpus kubectl_dra.yamlio is measured on: plain scalars in every spelling either YAML version knows, in
every position a scalar takes, and whole documents (merges, keys, block scalars, tags). record.py runs it through
the Go oracle (sigs.k8s.io/yaml.YAMLToJSON, what kubectl does to a YAML file) into tests/unit/data/yaml-kubernetes.jsonl;
tests/unit/test_yamlio.py compares kubectl-dra's loader with that record and checks that it is current."""

NUMBERS = (
    "0 00 017 09 0o17 0O17 0o8 0x1F 0X1f 0x_1F 0b11 0B11 1_000 1__0 1_ _1 1. 1.0 1.50 .5 0. 1e3 1E3 1.0e+3 1.0e3 1e"
    " e3 1:20 1:70 190:20:30 1:20.5 0000:00:02.0 0000:00:04.0 0000:87:02.0 0000:3b:00.0 12:30:00 .inf .Inf .NaN"
    " .nan 1_0.5 1_000.5 .5_0 ._5 1_.5 1e1_0 10.0.0.1 550.54.15 1.2.3 80Gi 100G 1.5Gi 0x 0x1p-2"
    " 123456789012345678901234567890 9223372036854775807 9223372036854775808 18446744073709551615"
    " 18446744073709551616 1e400 1e-400 0.1 3.14159265358979323846"
).split()
WORDS = (
    "yes Yes YES no No NO on On ON off Off OFF y Y n N oN true True TRUE tRUE false False FALSE null Null NULL ~ ="
    " << nvidia.com/gpu gpu.example.com a:b a#b a,b NoSchedule Bound true-ish"
).split()
DATES = "2026-11-30 2026-11-30T00:00:00Z 2026-11-30t00:00:00.5+01:00 2026-1-3 2026-02-30 2026-13-01".split()
OTHER = ["2001-12-14 21:59:43.10 -5", "é", "漢字", "a\u2028b", "a\x85b", "\ufeffa", "a\tb", "\x07"]
SCALARS = [s + b for s in ("", "+", "-") for b in NUMBERS] + WORDS + DATES + OTHER
CONTEXTS = [
    "a: {}\n",
    "- {}\n",
    "{}: v\n",
    "[{}, x]\n",
    "{{k: {}}}\n",
    'a: "{}"\n',
    "a: '{}'\n",
    "a: |\n  {}\n  x",
    "a: |\n  {}\n  x\n",
    "a: >-\n  {}\n  x\n",
    "a: |+\n  {}\n\n",
    "a: |2\n   {}\n  x\n",
    "a: >\n  {}\n\n  x\n",
    "a:\n  - {0}\n  - b: {0}\n",
    "a: {} # comment\n",
    "a: x {} y\n",
    "? {}\n: v\n",
    "a: !!str {}\n",
    "a: !!int {}\n",
    "a: !!float {}\n",
    "a: &x {}\nb: *x\n",
    "a: {{<<: {{b: {}}}}}\n",
]
DOCUMENTS = [
    "a: 1\na: 2\n",
    "a: &b {x: 1, y: 2}\nc:\n  <<: *b\n  y: 3\n",
    "{1: a, true: b, 1.5: c, -2: d}\n",
    "{~: 1}\n",
    "{18446744073709551615: a}\n",
    "{.inf: a, .nan: b}\n",
    "a: !!binary aGk=\n",
    "a: !!timestamp 2026-11-30\n",
    "a: !!bool yes\n",
    "a: !!null ''\n",
    "a: [1, 2\n",
    "a: b: c\n",
    "- [a, b]: c\n",
    'a: "\\u00e9\\x41\\t\\N\\_"\n',
    "a: 'it''s'\n",
    "a: >\n  folded\n  text\n\n  para\n",
    "a: plain\n  continued\n",
    "%YAML 1.1\n---\na: 1\n",
]


def texts() -> list[str]:
    return [c.format(s) for c in CONTEXTS for s in SCALARS] + DOCUMENTS

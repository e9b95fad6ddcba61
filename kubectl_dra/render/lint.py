"""`kubectl dra lint` output: text as compilers print it (file:line:col: code severity: message, then the hint),
JSON (kind: LintResult) and SARIF 2.1.0 (GitHub code scanning shows the findings on the pull request's lines)."""

from __future__ import annotations

import hashlib

from kubectl_dra import jsonio
from kubectl_dra.render.escape import esc

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def render_lint(report, fmt: str, stream, registry, version: str) -> None:
    if fmt == "json":
        stream.write(jsonio.dumps(report.to_dict()) + "\n")
        return
    if fmt == "sarif":
        stream.write(jsonio.dumps(sarif(report, registry, version)) + "\n")
        return
    for f in report.findings:
        stream.write(f"{esc(f.file)}:{f.line}:{f.column}: {f.finding.code} {f.severity}: {esc(f.finding.message)}\n")
        hint = registry[f.finding.code].hint
        if hint:
            stream.write(f"    hint: {hint}\n")


# GitHub code scanning matches a finding across commits by its fingerprints: ours holds what the finding is about
# (rule, file, message), not where it sits, so that a line moved by an edit above it is the same alert
FINGERPRINT = "kubectlDraFinding/v1"


def fingerprint(f) -> str:
    return hashlib.sha256(f"{f.finding.code}\0{f.file}\0{f.finding.message}".encode()).hexdigest()[:32]


def sarif(report, registry, version: str) -> dict:
    codes = sorted({f.finding.code for f in report.findings})
    rules = [
        {
            "id": c,
            "name": registry[c].name,
            "shortDescription": {"text": registry[c].summary},
            "fullDescription": {"text": registry[c].explanation},
            "help": {"text": registry[c].hint},
            "helpUri": f"https://github.com/kubectl-dra/kubectl-dra/blob/main/docs/codes/{c}.md",
            "defaultConfiguration": {"level": _LEVEL[registry[c].severity]},
        }
        for c in codes
    ]
    results = [
        {
            "ruleId": f.finding.code,
            "ruleIndex": codes.index(f.finding.code),
            "level": _LEVEL[f.severity],
            "message": {"text": f.finding.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": f.file},
                        "region": {"startLine": max(1, f.line), "startColumn": max(1, f.column)},
                    }
                }
            ],
            "partialFingerprints": {FINGERPRINT: fingerprint(f)},
        }
        for f in report.findings
    ]
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "kubectl-dra",
                        "version": version,
                        "informationUri": "https://github.com/kubectl-dra/kubectl-dra",
                        "rules": rules,
                    }
                },
                "results": results,
            }
        ],
    }

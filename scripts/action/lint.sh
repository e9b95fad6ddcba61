#!/usr/bin/env bash
# The lint step of action.yml: writes kubectl-dra.sarif (whatever the findings) and sets the step's `sarif` output,
# then exits as `kubectl dra lint --fail-on` does (0 clean, 1 a finding at or above FAIL_ON, 2 it could not run).
# Inputs (environment): PATHS (space-separated files or directories), DUMP (optional), FAIL_ON.
set -uo pipefail
out="${SARIF_FILE:-kubectl-dra.sarif}"
ref=()
if [ -n "${DUMP:-}" ]; then ref=(--from-file "$DUMP"); fi
read -r -a paths <<<"${PATHS:-.}"
kubectl-dra lint "${paths[@]}" "${ref[@]}" --fail-on "${FAIL_ON:-error}" -o sarif >"$out"
code=$?
if [ -s "$out" ] && [ -n "${GITHUB_OUTPUT:-}" ]; then echo "sarif=$out" >>"$GITHUB_OUTPUT"; fi
kubectl-dra lint "${paths[@]}" "${ref[@]}" --fail-on "${FAIL_ON:-error}" || true  # the findings in the job's log
exit "$code"

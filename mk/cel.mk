# CEL environment (kubectl_dra/cel): conformance, bounds/memoisation and upstream-agreement tests.
#   make cel-test     the pure-Python tests (no oracle, no network), a few seconds
#   make cel-oracle   also the differential tests against the upstream Go oracle (tests/oracle);
#                     builds missing oracle binaries via tests/oracle/build.sh (Go module proxy,
#                     cached under $${KUBECTL_DRA_CACHE:-$$HOME/.cache/kubectl-dra}/oracle)
.PHONY: cel-test cel-oracle

cel-test: $(STAMP)
	$(PY) -m pytest -q -m "not oracle" tests/unit/cel

cel-oracle: $(STAMP)
	KUBECTL_DRA_BUILD_ORACLE=1 $(PY) -m pytest -q tests/unit/cel

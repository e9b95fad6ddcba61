# CEL environment (kubectl_dra/cel): conformance, bounds/memoisation and upstream-agreement tests.
#   make cel-test     the pure-Python tests (no oracle, no network), under a minute
#   make cel-oracle   all of them, including the differential tests against the upstream Go oracle
#                     (tests/oracle); missing oracle binaries are built on demand by the tests via
#                     tests/oracle/build.sh (Go module proxy, a few minutes per minor when cold, cached
#                     under $${KUBECTL_DRA_CACHE:-$$HOME/.cache/kubectl-dra}/oracle); a failed build
#                     fails the tests (they are never skipped; `make test` runs them too)
.PHONY: cel-test cel-oracle

cel-test: $(STAMP)
	$(PY) -m pytest -q -m "not oracle" tests/unit/cel

cel-oracle: $(STAMP)
	$(PY) -m pytest -q tests/unit/cel

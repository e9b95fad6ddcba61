# Differential fidelity tests against upstream Kubernetes (issue 4, docs/fidelity.md).
#   make fidelity [N=200] [SEED=1] [VERSIONS=1.34,1.35,1.36,1.37,1.38] [SHRINK=0]
#       builds or reuses the upstream oracles of FIDELITY_VERSIONS (cached under $${KUBECTL_DRA_CACHE:-~/.cache/kubectl-dra}/oracle;
#       1.38 with the Go toolchain pinned in tests/oracle/toolchain.sh, fetched through the module proxy),
#       runs N generated scenarios per version through the oracle and kubectl-dra's engine, prints the
#       agreement tables and ends with `agreed A of T`; minimal disagreeing scenarios are written to
#       $${KUBECTL_DRA_CACHE:-~/.cache/kubectl-dra}/fidelity/disagreements/.
#   make fidelity-oracles    only build (or reuse) the oracles
.PHONY: fidelity fidelity-oracles

FIDELITY_VERSIONS := 1.34 1.35 1.36 1.37 1.38
N ?= 200
SEED ?= 1
VERSIONS ?= 1.34,1.35,1.36,1.37,1.38

fidelity-oracles:
	@for v in $(FIDELITY_VERSIONS); do bash tests/oracle/build.sh $$v >/dev/null || exit 1; done

fidelity: $(STAMP) fidelity-oracles
	$(PY) tests/fidelity/compare.py --n $(N) --seed $(SEED) --versions $(VERSIONS) $(if $(filter 0,$(SHRINK)),--no-shrink)

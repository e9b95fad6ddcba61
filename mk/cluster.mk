# Local Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler
# built from the Go module proxy) and the end-to-end suite. See tests/cluster/README.md.
#   make cluster-build [K8S=1.38]      build or reuse the binaries (cached outside the repo; K8S=1.38:
#                                      the v1.38.0-beta.0 control plane of tests/cluster/v1.38)
#   make cluster-up [GATES=dra|A=true,B=false] [K8S=1.38] [CLUSTER_DIR=...]   start, print the kubeconfig path
#   make cluster-down [CLUSTER_DIR=...] stop and clean up
#   make e2e                           build-or-reuse, then pytest -m e2e tests/e2e (the session
#                                      fixture starts the control plane and stops it at the end)
.PHONY: cluster-build cluster-up cluster-down cluster-status e2e

CLUSTER_PYTHON ?= python3
CLUSTER_SCRIPT := tests/cluster/cluster.py
CLUSTER_ARGS = $(if $(CLUSTER_DIR),--state "$(CLUSTER_DIR)") $(if $(GATES),--gates "$(GATES)") $(if $(K8S),--k8s "$(K8S)")

cluster-build:
	@time $(CLUSTER_PYTHON) $(CLUSTER_SCRIPT) build $(if $(K8S),--k8s "$(K8S)")

cluster-up:
	$(CLUSTER_PYTHON) $(CLUSTER_SCRIPT) up $(CLUSTER_ARGS)

cluster-down:
	$(CLUSTER_PYTHON) $(CLUSTER_SCRIPT) down $(if $(CLUSTER_DIR),--state "$(CLUSTER_DIR)")

cluster-status:
	$(CLUSTER_PYTHON) $(CLUSTER_SCRIPT) status $(if $(CLUSTER_DIR),--state "$(CLUSTER_DIR)")

e2e: $(STAMP) cluster-build
	$(PY) -m pytest -m e2e tests/e2e

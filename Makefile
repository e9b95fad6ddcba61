# kubectl-dra developer entry points. `make demo` and `make test` work on a fresh machine:
# they create .venv from the pinned lock files before doing anything else.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed

.PHONY: venv demo test unit lint docs docs-check golden bench bench-report screenshots clean help
.DEFAULT_GOAL := help

help:
	@echo "make demo        run 'kubectl dra explain pod' on the bundled tutorial example"
	@echo "make test        everything CI runs (unit, scenarios, CEL, docs, e2e, fidelity, install)"
	@echo "make unit        the fast tests only (no cluster, no Go builds)"
	@echo "make lint        ruff check and ruff format --check (part of make test)"
	@echo "make docs        regenerate docs/ from the finding registry and the CLI"
	@echo "make golden      rewrite tests/scenarios/*/expected.* from the current CLI"
	@echo "make bench       the 40,000-device benchmark"
	@echo "make bench-report  the HTML report against status -A, 5,000 pending pods (paired rounds)"
	@echo "make screenshots   docs/images/report.png: README's picture of the HTML report (headless Chromium)"

$(STAMP): requirements/dev.lock pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --disable-pip-version-check -r requirements/dev.lock
	$(PIP) install -q --disable-pip-version-check --no-deps -e .
	touch $@

venv: $(STAMP)

demo: $(STAMP)
	-$(VENV)/bin/kubectl-dra explain pod recomendador-7d9c8b6f5-x2x4k --from-file examples/tutorial/step3-allocated.yaml
	@echo
	$(VENV)/bin/kubectl-dra explain pod recomendador-7d9c8b6f5-x2x4k --from-file examples/tutorial/step4-driver-missing.yaml --exit-zero

UNIT = -m "not e2e and not oracle and not install"

unit: $(STAMP)
	$(PY) -m pytest -q -n auto $(UNIT) tests

docs: $(STAMP)
	NO_COLOR=1 $(PY) scripts/gen_docs.py

docs-check: $(STAMP)
	NO_COLOR=1 $(PY) scripts/gen_docs.py --check

golden: $(STAMP)
	$(PY) -m pytest -q tests/test_scenarios.py --update-golden

bench: $(STAMP)
	$(PY) benchmarks/bench.py --keep .cache/bench

bench-report: $(STAMP)
	$(PY) benchmarks/bench.py --keep .cache/bench --report

# Further targets (cluster, e2e, fidelity, dist, install-test) live in mk/*.mk.
-include mk/*.mk

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# The tests without a server run on every core (pytest-xdist); the control planes, oracles and frozen builds,
# which session fixtures start once, in one process after them.
test: $(STAMP) docs-check lint
	$(PY) -m pytest -q -n auto $(UNIT) tests
	$(PY) -m pytest -q -m "e2e or oracle or install" tests

clean:
	rm -rf $(VENV) build dist .pytest_cache

# README's picture of `kubectl dra report` (the devices-map scenario's dump), taken by headless Chromium
CHROMIUM ?= chromium
screenshots: $(STAMP)
	mkdir -p .cache
	$(VENV)/bin/kubectl-dra report -A --kubernetes-version 1.37 --exit-zero \
	  --from-file tests/scenarios/devices-map/input.yaml --output-file $(CURDIR)/.cache/report.html
	$(CHROMIUM) --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1100,1400 \
	  --screenshot=$(CURDIR)/docs/images/report.png file://$(CURDIR)/.cache/report.html

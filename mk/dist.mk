# Distribution: wheel/sdist, the standalone krew archive, the krew manifest (issue 5, docs/install.md).
#   make dist            dist/kubectl_dra-<v>-py3-none-any.whl, dist/kubectl_dra-<v>.tar.gz,
#                        dist/kubectl-dra_<os>_<arch>.tar.gz (PyInstaller onedir + LICENSE, for this
#                        machine's os/arch) and dist/<name>.yaml (krew manifest with their sha256).
#                        URI_BASE=...  where the archives will be published ({tag} -> v<version>)
#                        KREW_NAME=... krew plugin name (default: metadata.name of krew-manifest.yaml)
#   make krew-manifest   rewrite ./krew-manifest.yaml from dist/ (release step; commit the result)
#   make install-test    build (or reuse) everything, then install it for real and run it:
#                        krew (--manifest/--archive, custom index, uninstall), pipx, validate-krew-manifest
# The toolchain venv, krew/validate-krew-manifest and the PyInstaller output are cached under
# $${KUBECTL_DRA_CACHE:-~/.cache/kubectl-dra}/{dist,tools}, keyed by the lock files and the sources.
.PHONY: dist krew-manifest install-test

DIST_BUILD := $(PY) scripts/release/build.py
DIST_MANIFEST_ARGS = $(if $(URI_BASE),--uri-base "$(URI_BASE)") $(if $(KREW_NAME),--name "$(KREW_NAME)")

dist: $(STAMP)
	@time $(DIST_BUILD) all $(DIST_MANIFEST_ARGS)
	@ls -l dist/

krew-manifest: $(STAMP)
	$(DIST_BUILD) manifest --update-root $(DIST_MANIFEST_ARGS)

install-test: $(STAMP)
	@time $(PY) -m pytest -q -m install tests/install

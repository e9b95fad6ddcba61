# Sourced by tests/oracle/build.sh and tests/oracle/table/record.sh: the Go toolchain for one oracle module.
#
# The k8s.io modules of a new minor may need a newer Go than the machine's (v0.38.x say `go 1.27.0`; this
# machine, the developers' and CI have go1.26 with GOTOOLCHAIN=local, which refuses such a module). Then the
# build runs with GOTOOLCHAIN=$ORACLE_GO_TOOLCHAIN: the go command fetches exactly that release
# (golang.org/toolchain@v0.0.1-<release>.<os>-<arch>) through GOPROXY, checks it against the checksum
# database like any module, and keeps it in the module cache, so a fresh machine needs nothing installed
# by hand. It is pinned to one release, not left to GOTOOLCHAIN=auto (which would take whatever the go
# directive names, the .0 release, and move when a go.mod does), so that every machine builds the oracle
# with the same compiler. Modules that the local Go can build keep using it: the 1.34-1.37 oracles build as
# before. Raise the pin when a module needs more than it gives.
ORACLE_GO_TOOLCHAIN=go1.27.3

# oracle_toolchain GO_MOD: export GOTOOLCHAIN=$ORACLE_GO_TOOLCHAIN if GO_MOD's go directive is newer than the
# local toolchain. Sets oracle_go to the toolchain chosen: "local" or the pin. (Call it directly, not in $(...):
# the export must reach the caller's shell.)
oracle_toolchain() {
  local need have pinned
  need="$(sed -n 's/^go \([0-9][0-9.]*\).*$/\1/p' "$1" | head -n1)"
  [ -n "$need" ] || { echo "toolchain.sh: no go directive in $1" >&2; return 2; }
  # Ask the local go from outside any module (inside one that needs more it only errors).
  have="$(cd / && GOTOOLCHAIN=local go env GOVERSION)"
  have="${have#go}"
  have="${have%% *}"
  if [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -n1)" = "$need" ]; then
    oracle_go=local
    return 0
  fi
  pinned="${ORACLE_GO_TOOLCHAIN#go}"
  if [ "$(printf '%s\n%s\n' "$need" "$pinned" | sort -V | head -n1)" != "$need" ]; then
    echo "toolchain.sh: $1 needs go $need, newer than the pinned $ORACLE_GO_TOOLCHAIN (raise ORACLE_GO_TOOLCHAIN)" >&2
    return 2
  fi
  export GOTOOLCHAIN="$ORACLE_GO_TOOLCHAIN"
  oracle_go="$ORACLE_GO_TOOLCHAIN"
}

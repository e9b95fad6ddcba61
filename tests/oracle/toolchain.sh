# Sourced by tests/oracle/build.sh and tests/oracle/table/record.sh: the Go toolchain for one oracle module.
#
# The k8s.io modules of a new minor may need a newer Go than the machine's: v0.38.x say `go 1.27.0`, and this
# machine, the developers' and CI have go1.26 with GOTOOLCHAIN=local, which refuses such a module ("go.mod
# requires go >= 1.27.0"). Such a module pins its toolchain in its go.mod (v1.38: `toolchain go1.27.3`), and the
# build runs with GOTOOLCHAIN set to it: the go command fetches exactly that release
# (golang.org/toolchain@v0.0.1-go1.27.3.<os>-<arch>) through GOPROXY, checks it against the checksum database like
# any module, and keeps it in the module cache, so a fresh machine needs nothing installed by hand. A pinned
# release rather than GOTOOLCHAIN=auto (which takes the go directive's .0 release and moves whenever a go.mod
# does), so that every machine builds the oracle with the same compiler; being in go.mod, the pin is part of the
# oracle's cache key. Modules without a toolchain line (1.34-1.37) build with the local Go, as before.

# oracle_toolchain GO_MOD: export GOTOOLCHAIN=<GO_MOD's toolchain directive> if it has one. Sets oracle_go to the
# toolchain used: "local" or that release. (Call it directly, not in $(...): the export must reach the caller.)
oracle_toolchain() {
  local pinned
  pinned="$(sed -n 's/^toolchain \(go[0-9][0-9a-z.]*\)[[:space:]]*$/\1/p' "$1" | head -n1)"
  if [ -n "$pinned" ]; then
    export GOTOOLCHAIN="$pinned"
    oracle_go="$pinned"
  else
    oracle_go=local
  fi
}

# The release build the size and memory benchmarks read (sourced by tests/bench/sizes.sh and
# tests/bench/memory.sh): the newest .deb `tauri build` wrote (scripts/release and
# tests/desktop/deb.sh both leave theirs in target/release/bundle/deb) and the binary inside it,
# which is what ships (the bundler writes the bundle type into it). When there is no .deb, it
# builds one with `scripts/release --bundles deb`, unsigned, and says so on stderr (the part's log).
# shellcheck shell=bash

BENCH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BENCH_TARGET=${CARGO_TARGET_DIR:-$BENCH_ROOT/target}
[[ $BENCH_TARGET == /* ]] || BENCH_TARGET=$BENCH_ROOT/$BENCH_TARGET

# The newest .deb under the release bundle directory, or nothing.
newest_deb() {
  find "$BENCH_TARGET/release/bundle/deb" -maxdepth 1 -name '*.deb' -printf '%T@ %p\n' 2>/dev/null |
    sort -rn | head -n 1 | cut -d' ' -f2-
}

# Sets RELEASE_DEB (the .deb) and RELEASE_BIN (its usr/bin/kiln, extracted into $1), building the
# .deb first when there is none. Returns 1, with the reason in RELEASE_WHY, when it cannot.
find_release() {
  RELEASE_DEB=$(newest_deb)
  if [[ -z $RELEASE_DEB ]]; then
    echo "bench: no release build in $BENCH_TARGET/release/bundle/deb: building one, UNSIGNED" \
      "(scripts/release --bundles deb; several minutes)" >&2
    local started=$SECONDS
    if ! (cd "$BENCH_ROOT" && env -u TAURI_SIGNING_PRIVATE_KEY CARGO_INCREMENTAL=0 \
      scripts/release --bundles deb --out "$BENCH_TARGET/bench/release-dist") >&2; then
      RELEASE_WHY="scripts/release failed (see the log)"
      return 1
    fi
    echo "bench: the release build took $((SECONDS - started)) s" >&2
    RELEASE_DEB=$(newest_deb)
    [[ -n $RELEASE_DEB ]] || { RELEASE_WHY="scripts/release wrote no .deb"; return 1; }
  fi
  echo "bench: reading $RELEASE_DEB (built $(date -r "$RELEASE_DEB" '+%F %T'))" >&2
  command -v dpkg-deb >/dev/null || { RELEASE_WHY="no dpkg-deb"; return 1; }
  mkdir -p "$1"
  dpkg-deb -x "$RELEASE_DEB" "$1" || { RELEASE_WHY="dpkg-deb cannot read $RELEASE_DEB"; return 1; }
  RELEASE_BIN=$1/usr/bin/kiln
  [[ -f $RELEASE_BIN ]] || { RELEASE_WHY="$RELEASE_DEB has no usr/bin/kiln"; return 1; }
}

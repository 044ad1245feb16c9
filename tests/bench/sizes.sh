#!/usr/bin/env bash
# The bench part `sizes` (scripts/bench): the .deb's size and the size of the release binary it
# ships, each against its goal and against its size before the release profile was tuned (the
# anchor, a fixed figure as last measured on main: .deb 17.40 MiB, binary 51.2 MB with its symbol
# table). Reads the newest release build, or makes one (tests/bench/release.sh).
# Sizes are in MB of 10^6 bytes (MiB beside them); the binary's cell says whether it is stripped.
set -euo pipefail
# shellcheck source=tests/bench/release.sh
source "$(dirname "${BASH_SOURCE[0]}")/release.sh"

DEB_GOAL=12000000 BIN_GOAL=25000000
DEB_BEFORE="18.25 MB before (17.40 MiB)"
BIN_BEFORE="51.2 MB before (not stripped)"
row() { printf 'bench-row\t%s\t%s\t%s\t%s\t%s\n' "$@"; }
# "12.34 MB (11.77 MiB)"
size_words() { awk -v b="$1" 'BEGIN { printf "%.2f MB (%.2f MiB)", b / 1e6, b / 1048576 }'; }
verdict() { if (($1 <= $2)); then echo met; else echo MISSED; fi; }

scratch=$(mktemp -d "${TMPDIR:-/tmp}/kiln-bench-sizes.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
if ! find_release "$scratch/root"; then
  row ".deb size" "unmeasured: $RELEASE_WHY" "$DEB_BEFORE" "≤ 12 MB" unmeasured
  row "release binary" "unmeasured: $RELEASE_WHY" "$BIN_BEFORE" "≤ 25 MB" unmeasured
  exit 0
fi

deb_bytes=$(stat -c %s "$RELEASE_DEB")
bin_bytes=$(stat -c %s "$RELEASE_BIN")
# Stripped: no symbol table (.symtab) left in the ELF file.
if readelf -S -W "$RELEASE_BIN" 2>/dev/null | grep -q '\.symtab'; then stripped="not stripped"; else stripped=stripped; fi
echo "bench: $RELEASE_DEB: $deb_bytes bytes; usr/bin/kiln: $bin_bytes bytes, $stripped"
# Stripping must leave the bundle type the bundler writes into the binary (the updater reads it).
if grep -qa __TAURI_BUNDLE_TYPE_VAR_DEB "$RELEASE_BIN"; then marker="marked as a deb install"; else marker="NOT marked as a deb install"; fi
echo "bench: usr/bin/kiln is $marker"
echo "bench: the .deb's largest files:"
dpkg-deb -c "$RELEASE_DEB" | sort -k3 -rn | head -n 5
row ".deb size" "$(size_words "$deb_bytes")" "$DEB_BEFORE" "≤ 12 MB" "$(verdict "$deb_bytes" "$DEB_GOAL")"
row "release binary" "$(size_words "$bin_bytes"), $stripped" "$BIN_BEFORE" "≤ 25 MB" "$(verdict "$bin_bytes" "$BIN_GOAL")"

#!/usr/bin/env bash
# The bench part `memory` (scripts/bench): the desktop app's idle memory against a bare Tauri
# window built from the same tauri/tao/wry/webkit2gtk versions (tests/bench/bare-window, built in
# release into target/bench/bare-window with a copy of Kiln's Cargo.lock). Each is started on
# Xvfb in a loopback-only network namespace (Kiln on a temp copy of examples/shop, with its own
# config directory, as tests/desktop/lib.sh starts the app), left idle until its memory settles
# (3 samples a second apart within 2%, at most SETTLE_LIMIT seconds), and measured over its whole
# process tree (the app and the WebKit web and network processes it spawns) from /proc: the sum
# of each process's Pss (/proc/PID/smaps_rollup), which counts a page shared by several of them
# once in all, split between them, where summing Rss would count it in each.
# Kiln is the binary of the newest release .deb (tests/bench/release.sh, which builds one when
# there is none). A step that cannot run here prints the row as unmeasured, saying why.
set -euo pipefail

NAME=memory
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kiln-memory.XXXXXX")
# shellcheck source=tests/desktop/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../desktop/lib.sh"
# shellcheck source=tests/bench/release.sh
source "$(dirname "${BASH_SOURCE[0]}")/release.sh"

SETTLE_LIMIT=${KILN_BENCH_SETTLE_LIMIT:-120} # seconds for memory to settle after the page renders
MEASURE="idle memory of the desktop app"
GOAL="≤ 1.5× a bare Tauri window"
GOAL_RATIO=1.5
row() { printf 'bench-row\t%s\t%s\t%s\t%s\t%s\n' "$@"; }
unmeasured() {
  row "$MEASURE" "unmeasured: $1" "—" "$GOAL" unmeasured
  exit 0
}
# The desktop tests' helpers fail a test; here a step that cannot run leaves the row unmeasured.
fail() {
  echo "bench memory: $*" >&2
  stop_app
  unmeasured "$*"
}
for tool in Xvfb xwininfo import convert unshare ip cargo; do
  command -v "$tool" >/dev/null || unmeasured "$tool is missing (./scripts/deps)"
done

# --- the two binaries ---------------------------------------------------------------------------
find_release "$tmp/kiln-root" || unmeasured "$RELEASE_WHY"
kiln_bin=$RELEASE_BIN

bare=$BENCH_TARGET/bench/bare-window
# capabilities/ empty: tauri-build watches it, and cargo reruns a build script watching a missing path.
mkdir -p "$bare/icons" "$bare/capabilities"
# cp -a keeps the sources' times, so an unchanged bare window is not rebuilt.
cp -a "$ROOT/tests/bench/bare-window/." "$bare/"
cp -a "$ROOT/src-tauri/icons/icon.png" "$bare/icons/"
cp "$ROOT/Cargo.lock" "$bare/Cargo.lock"
# Built with Kiln's release profile: its manifest plus Kiln's [profile.release], replaced only
# when that changed (a new manifest rebuilds the crate).
{
  cat "$ROOT/tests/bench/bare-window/Cargo.toml"
  echo
  awk '/^\[/ { on = ($0 == "[profile.release]") } on' "$ROOT/Cargo.toml"
} >"$tmp/Cargo.toml"
cmp -s "$tmp/Cargo.toml" "$bare/Cargo.toml.built" || { cp "$tmp/Cargo.toml" "$bare/Cargo.toml.built"; }
cp -a "$bare/Cargo.toml.built" "$bare/Cargo.toml"
say "building the bare window in release ($bare)"
started=$SECONDS
(cd "$bare" && CARGO_INCREMENTAL=0 CARGO_TARGET_DIR="$bare/target" cargo build --release --offline 2>&1 ||
  CARGO_INCREMENTAL=0 CARGO_TARGET_DIR="$bare/target" cargo build --release 2>&1) ||
  unmeasured "the bare window does not build (see the log)"
say "the bare window built in $((SECONDS - started)) s"
bare_bin=$bare/target/release/kiln-bare-window
# Cargo keeps the copied lock's versions for what both use: check that it did.
locked() { awk -v name="$2" '$0 == "name = \"" name "\"" { getline; sub(/^version = /, ""); gsub(/"/, ""); print }' "$1" | sort -u | paste -sd' '; }
for crate in tauri tao wry webkit2gtk javascriptcore-rs; do
  ours=$(locked "$ROOT/Cargo.lock" "$crate") theirs=$(locked "$bare/Cargo.lock" "$crate")
  [[ $ours == "$theirs" ]] || unmeasured "the bare window has $crate $theirs, Kiln $ours"
  say "$crate $ours in both"
done

# --- measuring one app --------------------------------------------------------------------------
# The pids of $1 and all its descendants, from /proc/PID/stat (its parent is the 2nd field after
# the command name, which may hold spaces: cut at the last ')').
tree_pids() {
  local stat
  for stat in /proc/[0-9]*/stat; do
    { read -r line <"$stat"; } 2>/dev/null || continue
    line=${line##*) }
    read -r _ ppid _ <<<"$line"
    echo "${stat//[^0-9]/} $ppid"
  done | awk -v root="$1" '
    { parent[$1] = $2 }
    END {
      want[root] = 1; print root
      for (changed = 1; changed;) {
        changed = 0
        for (p in parent) if (!(p in want) && (parent[p] in want)) { want[p] = 1; print p; changed = 1 }
      }
    }'
}
# "PSS_KB RSS_KB PROCESSES" of the tree under $1.
tree_memory() {
  local pid pss=0 rss=0 n=0 p r
  for pid in $(tree_pids "$1"); do
    read -r p r < <(awk '/^Pss:/ { p = $2 } /^Rss:/ { r = $2 } END { print p + 0, r + 0 }' "/proc/$pid/smaps_rollup" 2>/dev/null) || continue
    ((p > 0)) || continue
    pss=$((pss + p)) rss=$((rss + r)) n=$((n + 1))
  done
  echo "$pss $rss $n"
}
netns=(unshare -n)
((EUID == 0)) || netns=(unshare -rn)
"${netns[@]}" true 2>/dev/null || unmeasured "cannot make a network namespace (${netns[*]})"

# Starts "$@" (the app), waits for its window and page, then samples its tree every second until
# 3 samples in a row are within 2% (or SETTLE_LIMIT passes), and sets IDLE to "PSS_KB RSS_KB N
# SECONDS SETTLED"; stops the app.
measure_idle() {
  local label=$1
  shift
  launch_app "${netns[@]}" sh -c 'ip link set lo up && exec "$@"' sh "$@"
  wait_window
  wait_render "$tmp/$label.png"
  local started=$SECONDS samples=() settled=no sample
  while ((SECONDS - started < SETTLE_LIMIT)); do
    kill -0 "$app_pid" 2>/dev/null || fail "$label exited while idle"
    sample=$(tree_memory "$app_pid")
    samples+=("$sample")
    say "$label after $((SECONDS - started)) s idle: Pss, Rss (kB), processes: $sample"
    if ((${#samples[@]} >= 3)) && awk -v a="${samples[-1]%% *}" -v b="${samples[-2]%% *}" -v c="${samples[-3]%% *}" '
      BEGIN { hi = a; lo = a; if (b > hi) hi = b; if (c > hi) hi = c; if (b < lo) lo = b; if (c < lo) lo = c
              exit !(hi > 0 && (hi - lo) / hi < 0.02) }'; then
      settled=yes
      break
    fi
    sleep 1
  done
  say "$label: the process tree: $(tree_pids "$app_pid" | while read -r p; do tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-80; done | tr '\n' ';')"
  IDLE="${samples[-1]} $((SECONDS - started)) $settled"
  stop_app
}

start_xvfb
# The bare window's title is "Kiln" too, so lib.sh's wait_window finds it.
measure_idle bare "$bare_bin"
read -r bare_pss bare_rss bare_n bare_secs bare_settled <<<"$IDLE"
copy_shop "$tmp/shop"
measure_idle kiln "$kiln_bin" --workspace "$tmp/shop"
read -r kiln_pss kiln_rss kiln_n kiln_secs kiln_settled <<<"$IDLE"

mb() { awk -v k="$1" 'BEGIN { printf "%.0f MB", k * 1024 / 1e6 }'; }
note() { [[ $1 == yes ]] || echo ", not settled in $2 s"; }
ratio=$(awk -v a="$kiln_pss" -v b="$bare_pss" 'BEGIN { printf "%.2f", a / b }')
verdict=$(awk -v r="$ratio" -v g="$GOAL_RATIO" 'BEGIN { print (r <= g ? "met" : "MISSED") }')
say "Kiln: Pss $kiln_pss kB (Rss $kiln_rss kB) in $kiln_n processes; bare window: Pss $bare_pss kB (Rss $bare_rss kB) in $bare_n processes; ${ratio}×"
row "$MEASURE" "$(mb "$kiln_pss") = ${ratio}× (Pss, $kiln_n processes$(note "$kiln_settled" "$kiln_secs"))" \
  "$(mb "$bare_pss") (Pss, $bare_n processes$(note "$bare_settled" "$bare_secs"))" "$GOAL" "$verdict"

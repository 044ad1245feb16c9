#!/usr/bin/env bash
# Desktop smoke test: opens the Kiln window (target/debug/kiln) on a virtual X display (Xvfb)
# with a temp copy of examples/shop, and checks that a window named "Kiln" appears, that the
# engine opened the workspace, and that the screenshot (tests/artifacts/desktop.png) is not
# blank: many colours, and clearly different from a screenshot of the empty screen.
# Builds nothing: it needs target/debug/kiln (./scripts/test builds it first).
set -euo pipefail

NAME=smoke
# tests/desktop/deb.sh compares its screenshot with this one: its scratch directory's name has
# the same length, so the workspace path in the header lines up.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kiln-smoke.XXXXXX")
# shellcheck source=tests/desktop/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
KILN=${KILN_BIN:-$ROOT/target/debug/kiln}
MIN_CHANGED_PIXELS=50000 # of 1280x800: the page must cover a good part of the screen

need_tools Xvfb xwininfo import convert compare
[[ -x $KILN ]] || fail "no binary at $KILN: run cargo build first"
mkdir -p "$ARTIFACTS"
start_xvfb
copy_shop "$tmp/shop"

launch_app "$KILN" --workspace "$tmp/shop"
wait_window

# The engine opened the workspace given on the command line: both are written as it opens, which
# on a loaded machine may be after the window appears.
wait_for "$tmp/shop/.kiln (the workspace opened)" "$STATE_TIMEOUT" test -d "$tmp/shop/.kiln"
wait_for "workspace in $tmp/config/recent-workspaces.json" "$STATE_TIMEOUT" grep -qsF "$tmp/shop" "$tmp/config/recent-workspaces.json"
ok "the window opened on the workspace"

wait_render "$ARTIFACTS/desktop.png"
assert_not_blank "$ARTIFACTS/desktop.png" "$MIN_CHANGED_PIXELS"
ok "the window renders the dashboard: $ARTIFACTS/desktop.png"

done_passed

#!/usr/bin/env bash
# Desktop smoke test: opens the Kiln window (target/debug/kiln) on a virtual X display (Xvfb)
# with a temp copy of examples/shop, and checks that a window named "Kiln" appears, that the
# engine opened the workspace, and that the screenshot (tests/artifacts/desktop.png) is not
# blank: many colours, and clearly different from a screenshot of the empty screen.
# Builds nothing: it needs target/debug/kiln (./scripts/test builds it first).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KILN=${KILN_BIN:-$ROOT/target/debug/kiln}
ARTIFACTS=$ROOT/tests/artifacts
WINDOW_TIMEOUT=${KILN_SMOKE_WINDOW_TIMEOUT:-40}  # seconds for the window to appear
RENDER_TIMEOUT=${KILN_SMOKE_RENDER_TIMEOUT:-60}  # seconds for the page to render after that
MIN_COLOURS=20
MIN_CHANGED_PIXELS=50000  # of 1280x800: the page must cover a good part of the screen

for tool in Xvfb xwininfo import convert compare; do
  command -v "$tool" >/dev/null || { echo "desktop smoke: $tool is missing: run ./scripts/deps" >&2; exit 1; }
done
[[ -x $KILN ]] || { echo "desktop smoke: no binary at $KILN: run cargo build first" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kiln-smoke.XXXXXX")
xvfb_pid=""
app_pid=""
cleanup() {
  if [[ -n $app_pid ]]; then
    # The app and its WebKit helper processes (its children).
    pkill -TERM -P "$app_pid" 2>/dev/null || true
    kill -TERM "$app_pid" 2>/dev/null || true
    for _ in 1 2 3 4 5; do kill -0 "$app_pid" 2>/dev/null || break; sleep 1; done
    pkill -KILL -P "$app_pid" 2>/dev/null || true
    kill -KILL "$app_pid" 2>/dev/null || true
    wait "$app_pid" 2>/dev/null || true
  fi
  if [[ -n $xvfb_pid ]]; then
    kill -TERM "$xvfb_pid" 2>/dev/null || true
    wait "$xvfb_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
  echo "desktop smoke: FAILED: $*" >&2
  if [[ -s $tmp/app.log ]]; then
    echo "--- last lines of the app's output ---" >&2
    tail -n 40 "$tmp/app.log" >&2
  fi
  echo "desktop: 0 passed, 1 failed"
  exit 1
}

mkdir -p "$ARTIFACTS" "$tmp/config" "$tmp/shop" "$tmp/runtime"
chmod 700 "$tmp/runtime"

# A virtual screen on a free display number: Xvfb writes the number it took to fd 3.
Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3>"$tmp/display" >"$tmp/xvfb.log" 2>&1 &
xvfb_pid=$!
for _ in $(seq 1 100); do
  [[ -s $tmp/display ]] && break
  kill -0 "$xvfb_pid" 2>/dev/null || { cat "$tmp/xvfb.log" >&2; fail "Xvfb did not start"; }
  sleep 0.1
done
[[ -s $tmp/display ]] || fail "Xvfb did not report a display within 10 s"
DISPLAY=":$(tr -d '[:space:]' <"$tmp/display")"
export DISPLAY
echo "desktop smoke: Xvfb on $DISPLAY"

# The empty screen, to compare against.
import -window root "$tmp/empty.png"

# A temp copy of the example workspace, without node_modules or .kiln.
tar -C "$ROOT/examples/shop" --exclude=node_modules --exclude=.kiln -cf - . | tar -C "$tmp/shop" -xf -

# No update check: nothing the tests run may reach beyond loopback.
KILN_CONFIG_DIR="$tmp/config" \
  KILN_NO_UPDATE_CHECK=1 \
  XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$tmp/runtime}" \
  WEBKIT_DISABLE_COMPOSITING_MODE=1 \
  LIBGL_ALWAYS_SOFTWARE=1 \
  NO_AT_BRIDGE=1 \
  "$KILN" --workspace "$tmp/shop" >"$tmp/app.log" 2>&1 &
app_pid=$!
started=$SECONDS

# Wait for a top-level window named "Kiln".
window=""
while (( SECONDS - started < WINDOW_TIMEOUT )); do
  kill -0 "$app_pid" 2>/dev/null || fail "kiln exited before its window appeared"
  window=$(xwininfo -root -tree 2>/dev/null | grep -E '^\s+0x[0-9a-f]+ "Kiln"' | head -n 1 || true)
  [[ -n $window ]] && break
  sleep 1
done
[[ -n $window ]] || fail "no window named \"Kiln\" within ${WINDOW_TIMEOUT} s"
echo "desktop smoke: window after $(( SECONDS - started )) s:$window"

# The engine opened the workspace given on the command line.
[[ -d $tmp/shop/.kiln ]] || fail "the workspace was not opened (no $tmp/shop/.kiln)"
grep -q "$tmp/shop" "$tmp/config/recent-workspaces.json" 2>/dev/null \
  || fail "the workspace is not in the recent workspaces ($tmp/config/recent-workspaces.json)"

# Wait for the page to render: poll until the screen has enough colours, then let it settle.
colours=0
render_start=$SECONDS
while (( SECONDS - render_start < RENDER_TIMEOUT )); do
  kill -0 "$app_pid" 2>/dev/null || fail "kiln exited while its page was loading"
  import -window root "$tmp/shot.png"
  colours=$(convert "$tmp/shot.png" -format %k info:)
  (( colours > MIN_COLOURS )) && break
  sleep 2
done
sleep 3
kill -0 "$app_pid" 2>/dev/null || fail "kiln exited after its page loaded"
import -window root "$ARTIFACTS/desktop.png"

colours=$(convert "$ARTIFACTS/desktop.png" -format %k info:)
changed=$(compare -metric AE "$tmp/empty.png" "$ARTIFACTS/desktop.png" null: 2>&1 || true)
echo "desktop smoke: screenshot $ARTIFACTS/desktop.png: $colours colours, $changed pixels differ from the empty screen"

(( colours > MIN_COLOURS )) || fail "the window looks blank: only $colours colours (want more than $MIN_COLOURS)"
awk -v n="$changed" -v min="$MIN_CHANGED_PIXELS" 'BEGIN { exit !(n + 0 > min) }' \
  || fail "the screenshot hardly differs from the empty screen ($changed pixels, want more than $MIN_CHANGED_PIXELS)"

echo "desktop smoke: passed"
echo "desktop: 1 passed, 0 failed"

# The desktop shell tests' shared part (smoke.sh, preview.sh, deb.sh), sourced after each sets
# NAME (its name in messages) and tmp (its scratch directory): pass/fail reporting in the form
# scripts/test counts, a virtual X display, the app launched with the tests' environment and
# stopped with its WebKit helpers, waits for its window, its page and any condition (never a
# check right after an event: the app does its work in its own time on a loaded machine), and
# cleanup on exit.
# shellcheck shell=bash

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ARTIFACTS=$ROOT/tests/artifacts
WINDOW_TIMEOUT=${KILN_SMOKE_WINDOW_TIMEOUT:-40} # seconds for the window to appear
STATE_TIMEOUT=${KILN_DESKTOP_STATE_TIMEOUT:-30} # seconds for what the app writes (wait_for)
RENDER_TIMEOUT=${KILN_SMOKE_RENDER_TIMEOUT:-60} # seconds for the page to render after that
MIN_COLOURS=20
xvfb_pid="" app_pid="" serve_pid=""
APP_ENV=()
passed=0

say() { echo "desktop $NAME: $*"; }
ok() {
  passed=$((passed + 1))
  say "ok: $*"
}
# Fails the test with the last lines of every log in $tmp, and the count scripts/test reads.
fail() {
  echo "desktop $NAME: FAILED: $*" >&2
  local log
  for log in "$tmp"/*.log; do
    [[ -s $log ]] || continue
    echo "--- last lines of $(basename "$log") ---" >&2
    tail -n 40 "$log" >&2
  done
  echo "desktop: $passed passed, 1 failed"
  exit 1
}
need_tools() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "desktop $NAME: $tool is missing: run ./scripts/deps" >&2; exit 1; }
  done
}
done_passed() {
  say "passed"
  echo "desktop: $passed passed, 0 failed"
}

# TERM, up to 10 s, then KILL.
stop_pid() {
  kill -TERM "$1" 2>/dev/null || return 0
  local _
  for _ in $(seq 1 20); do kill -0 "$1" 2>/dev/null || break; sleep 0.5; done
  kill -KILL "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
# The app and its WebKit helper processes (its children).
stop_app() {
  [[ -n $app_pid ]] || return 0
  pkill -TERM -P "$app_pid" 2>/dev/null || true
  stop_pid "$app_pid"
  pkill -KILL -P "$app_pid" 2>/dev/null || true
  app_pid=""
}
# On exit: the app, a `kiln serve`, Xvfb, anything cleanup_extra stops, and $tmp.
cleanup_extra() { :; }
cleanup() {
  [[ -n $serve_pid ]] && stop_pid "$serve_pid"
  stop_app
  [[ -n $xvfb_pid ]] && stop_pid "$xvfb_pid"
  cleanup_extra
  rm -rf "$tmp"
}
trap cleanup EXIT

# A virtual screen on a free display number (Xvfb writes the number it took to fd 3); exports
# DISPLAY and takes $tmp/empty.png, the empty screen to compare screenshots with.
start_xvfb() {
  Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3>"$tmp/display" >"$tmp/xvfb.log" 2>&1 &
  xvfb_pid=$!
  local _
  for _ in $(seq 1 100); do
    [[ -s $tmp/display ]] && break
    kill -0 "$xvfb_pid" 2>/dev/null || fail "Xvfb did not start"
    sleep 0.1
  done
  [[ -s $tmp/display ]] || fail "Xvfb did not report a display within 10 s"
  DISPLAY=":$(tr -d '[:space:]' <"$tmp/display")"
  export DISPLAY
  say "Xvfb on $DISPLAY"
  import -window root "$tmp/empty.png"
}

# A temp copy of examples/shop, without node_modules or .kiln, at $1.
copy_shop() {
  mkdir -p "$1"
  tar -C "$ROOT/examples/shop" --exclude=node_modules --exclude=.kiln -cf - . | tar -C "$1" -xf -
}

# Runs the app command "$@" in the background (app_pid, output in $tmp/app.log) with the tests'
# environment: its own config dir, no update check (nothing the tests run may reach beyond
# loopback), software rendering. APP_ENV (an array of NAME=VALUE) adds to it.
launch_app() {
  mkdir -p "$tmp/config" "$tmp/runtime"
  chmod 700 "$tmp/runtime"
  env KILN_CONFIG_DIR="$tmp/config" KILN_NO_UPDATE_CHECK=1 XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$tmp/runtime}" \
    WEBKIT_DISABLE_COMPOSITING_MODE=1 LIBGL_ALWAYS_SOFTWARE=1 NO_AT_BRIDGE=1 "${APP_ENV[@]}" \
    "$@" >"$tmp/app.log" 2>&1 &
  app_pid=$!
}

# Polls the command "$@" every half second until it succeeds, and says how long it took; fails the
# test naming $1 after $2 seconds, or at once when the app exits meanwhile.
#   wait_for "the workspace's .kiln" "$STATE_TIMEOUT" test -d "$dir/.kiln"
wait_for() {
  local what=$1 limit=$2 started=$SECONDS
  shift 2
  until "$@"; do
    [[ -z $app_pid ]] || kill -0 "$app_pid" 2>/dev/null || fail "kiln exited while waiting for $what"
    ((SECONDS - started < limit)) || fail "no $what within $limit s"
    sleep 0.5
  done
  say "$what after $((SECONDS - started)) s"
}

# Waits for a top-level window named "Kiln" (sets window to xwininfo's line).
wait_window() {
  local started=$SECONDS
  window=""
  while ((SECONDS - started < WINDOW_TIMEOUT)); do
    kill -0 "$app_pid" 2>/dev/null || fail "kiln exited before its window appeared"
    window=$(xwininfo -root -tree 2>/dev/null | grep -E '^\s+0x[0-9a-f]+ "Kiln"' | head -n 1 || true)
    [[ -n $window ]] && break
    sleep 1
  done
  [[ -n $window ]] || fail "no window named \"Kiln\" within ${WINDOW_TIMEOUT} s"
  say "window after $((SECONDS - started)) s:$window"
}

# Waits for the page to render (more than MIN_COLOURS colours on screen), lets it settle, and
# saves the screen as $1.
wait_render() {
  local render_start=$SECONDS
  while ((SECONDS - render_start < RENDER_TIMEOUT)); do
    kill -0 "$app_pid" 2>/dev/null || fail "kiln exited while its page was loading"
    import -window root "$tmp/shot.png"
    (($(convert "$tmp/shot.png" -format %k info:) > MIN_COLOURS)) && break
    sleep 2
  done
  sleep 3
  kill -0 "$app_pid" 2>/dev/null || fail "kiln exited after its page loaded"
  import -window root "$1"
}

# Fails unless screenshot $1 has more than MIN_COLOURS colours and differs from the empty screen
# in more than $2 pixels; says how it measured.
assert_not_blank() {
  local colours changed
  colours=$(convert "$1" -format %k info:)
  changed=$(compare -metric AE "$tmp/empty.png" "$1" null: 2>&1 || true)
  say "screenshot $1: $colours colours, $changed pixels differ from the empty screen"
  ((colours > MIN_COLOURS)) || fail "the window looks blank: only $colours colours (want more than $MIN_COLOURS)"
  awk -v n="$changed" -v min="$2" 'BEGIN { exit !(n + 0 > min) }' ||
    fail "the screenshot hardly differs from the empty screen ($changed pixels, want more than $2)"
}

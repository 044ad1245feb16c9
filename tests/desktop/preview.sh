#!/usr/bin/env bash
# Desktop preview check: the session's application rendering inside the Tauri window on a
# virtual X display (Xvfb). A `kiln serve` on a temp copy of examples/shop creates a session
# (its setup runs `npm ci --offline`) and is stopped; then the window opens on that session
# with the preview card open (KILN_UI_ROUTE=#/session/<id>?preview=1). Passes when the
# screenshot (tests/artifacts/preview-desktop.png) shows the shop's own colours where the card
# is, which needs the gateway's cookie to work inside the webview's third-party frame, and
# when no process of the session's working copy outlives the app after a SIGTERM.
# Builds nothing: it needs target/debug/kiln (./scripts/test builds it first).
set -euo pipefail

NAME=preview
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kiln-preview.XXXXXX")
# shellcheck source=tests/desktop/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
KILN=${KILN_BIN:-$ROOT/target/debug/kiln}
PREVIEW_TIMEOUT=${KILN_PREVIEW_RENDER_TIMEOUT:-90} # seconds for the shop to show in the card
# The shop's page background and accent (examples/shop/shell/style.css): Kiln uses neither.
SHOP_BG="#F7F4EF"
SHOP_ACCENT="#B5542D"
# Where the preview docks on a 1280x800 screen: the right-hand pane of the split beside the chat
# (the session rail, the chat and its composer take the left 800 px).
CARD_REGION=420x440+820+240
MIN_BG_PIXELS=20000
MIN_ACCENT_PIXELS=300

need_tools Xvfb xwininfo import convert node
[[ -x $KILN ]] || fail "no binary at $KILN: run cargo build first"
# Anything still running from the temp workspace (a failed check) goes too.
cleanup_extra() {
  local pid
  for pid in $(session_pids "$tmp"); do kill -KILL "$pid" 2>/dev/null || true; done
}

# Pids whose command line or working directory is inside $1.
session_pids() {
  local dir=$1 pid
  for proc in /proc/[0-9]*; do
    pid=${proc#/proc/}
    [[ $pid == "$$" ]] && continue
    if tr '\0' ' ' 2>/dev/null <"$proc/cmdline" | grep -qF "$dir" || [[ $(readlink "$proc/cwd" 2>/dev/null) == "$dir"* ]]; then
      echo "$pid"
    fi
  done
}

mkdir -p "$ARTIFACTS" "$tmp/config"
copy_shop "$tmp/shop"

# 1. A session, created through `kiln serve` on the same workspace, its setup finished.
KILN_CONFIG_DIR="$tmp/config" "$KILN" serve --port 0 --workspace "$tmp/shop" >"$tmp/serve.log" 2>&1 &
serve_pid=$!
url=""
for _ in $(seq 1 120); do
  url=$(grep -oE 'http://127\.0\.0\.1:[0-9]+/' "$tmp/serve.log" | head -n 1 || true)
  [[ -n $url ]] && break
  kill -0 "$serve_pid" 2>/dev/null || fail "kiln serve exited"
  sleep 0.5
done
[[ -n $url ]] || fail "kiln serve printed no URL"
# A script connects as the user's own would: with the token in the file the server named.
port=${url##*:}
port=${port%/}
token_file="$tmp/config/loopback-$port.token"
[[ -f $token_file ]] || fail "kiln serve wrote no token file at $token_file"
session=$(KILN_URL=$url KILN_TOKEN_FILE=$token_file node --input-type=module -e '
  const base = process.env.KILN_URL;
  const token = (await import("node:fs")).readFileSync(process.env.KILN_TOKEN_FILE, "utf8").trim();
  const headers = { "x-kiln": "1", "content-type": "application/json" };
  const connect = await fetch(new URL("api/connect", base), { method: "POST", headers, body: JSON.stringify({ token }) });
  if (!connect.ok) throw new Error(`connect: ${connect.status} ${await connect.text()}`);
  headers.cookie = connect.headers.get("set-cookie").split(";")[0];
  const call = async (command, args) => {
    const res = await fetch(new URL(`api/${command}`, base), { method: "POST", headers, body: JSON.stringify(args) });
    if (!res.ok) throw new Error(`${command}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const { id } = await call("create_session", { brief: "Add a wishlist to @shop/catalog" });
  for (let i = 0; i < 240; i++) {
    const { setup } = await call("get_session", { sessionId: id });
    if (setup === "failed") throw new Error("the session setup failed");
    if (setup === "passed" || setup === "none") { console.log(id); process.exit(0); }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error("the session setup did not finish within 2 minutes");
') || fail "could not create a session through kiln serve"
stop_pid "$serve_pid"
serve_pid=""
workcopy="$tmp/shop/.kiln/sessions/$session/workspace"
[[ -d $workcopy ]] || fail "no working copy at $workcopy"

# 2. The window, opened on that session with its preview card.
start_xvfb
APP_ENV=(KILN_UI_ROUTE="#/session/$session?preview=1")
launch_app "$KILN" --workspace "$tmp/shop"
wait_window
ok "session $session, its setup finished; the window opened on it"

# 3. The shop inside the card: its background and accent where the preview docks.
count() { convert "$1" -crop "$CARD_REGION" +repage -fill black +opaque "$2" -fill white -opaque "$2" -format '%[fx:round(mean*w*h)]' info:; }
bg=0 accent=0
render_start=$SECONDS
while (( SECONDS - render_start < PREVIEW_TIMEOUT )); do
  kill -0 "$app_pid" 2>/dev/null || fail "kiln exited while the preview was loading"
  import -window root "$tmp/shot.png"
  bg=$(count "$tmp/shot.png" "$SHOP_BG")
  accent=$(count "$tmp/shot.png" "$SHOP_ACCENT")
  (( bg > MIN_BG_PIXELS && accent > MIN_ACCENT_PIXELS )) && break
  sleep 2
done
sleep 2
import -window root "$ARTIFACTS/preview-desktop.png"
bg=$(count "$ARTIFACTS/preview-desktop.png" "$SHOP_BG")
accent=$(count "$ARTIFACTS/preview-desktop.png" "$SHOP_ACCENT")
colours=$(convert "$ARTIFACTS/preview-desktop.png" -format %k info:)
say "$ARTIFACTS/preview-desktop.png: $colours colours; in the card, $bg shop-background and $accent shop-accent pixels"
(( colours > 20 )) || fail "the window looks blank ($colours colours)"
(( bg > MIN_BG_PIXELS && accent > MIN_ACCENT_PIXELS )) \
  || fail "the card does not show the shop ($bg background pixels, want > $MIN_BG_PIXELS; $accent accent pixels, want > $MIN_ACCENT_PIXELS)"
[[ -n $(session_pids "$workcopy") ]] || fail "no process runs from the session's working copy"
ok "the shop renders in the preview card: $ARTIFACTS/preview-desktop.png"

# 4. SIGTERM closes the app as its window would: the preview's server goes with it. The app
#    alone is signalled (stop_app would signal its children, the preview's server among them).
stop_pid "$app_pid"
app_pid=""
left=""
for _ in $(seq 1 20); do
  left=$(session_pids "$workcopy")
  [[ -z $left ]] && break
  sleep 0.5
done
[[ -z $left ]] || fail "processes of the session's working copy outlived the app: $left"
ok "after SIGTERM no process of the session's working copy is left"

done_passed

#!/usr/bin/env bash
# Desktop .deb test: builds the signed .deb with scripts/release and a throwaway key pair, checks
# its metadata (package, version, depends, section), its desktop entry and icons, the bundle type
# written into its binary, and latest.json (its signature is the .sig's, and verifies against the
# public key); then extracts it into a scratch root (dpkg -x), launches the INSTALLED binary on
# Xvfb in a loopback-only network namespace on a temp copy of examples/shop, and checks that the
# window renders the dashboard: not blank, and laid out like the debug build's smoke screenshot
# (tests/artifacts/desktop.png, from tests/desktop/smoke.sh, which runs first). Screenshots:
# tests/artifacts/deb-dashboard.png and deb-header-diff.png.
# Then the installed app updates itself to a second, newer build (tests/desktop/update.mjs).
# Both builds use cargo's dev profile (scripts/release --debug), which reuses what the test run
# compiled: a few minutes, where two builds with the shipped release profile (whole-program
# optimization) take about 25 minutes on 2 cores. The package, its signature, latest.json and the
# update are made the same way in both profiles. KILN_DEB_PROFILE=release builds with the shipped
# profile (before publishing a release, by hand). KILN_DEB_KEEP_DIR=<dir> keeps the builds, and
# KILN_DEB_RELEASE_DIR=<that dir> reuses them instead of building (for reruns by hand).
set -euo pipefail

NAME=deb
# Same name length as smoke.sh's kiln-smoke.XXXXXX, so the workspace path shown in the header
# lines up with the smoke screenshot's.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kiln-deb.XXXXXXXX")
# shellcheck source=tests/desktop/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
MIN_CHANGED_PIXELS=50000 # of 1280x800, as in smoke.sh
# Layout: the header band (logo, workspace, version and buttons) and the whole screen, against
# the smoke screenshot. Only the scratch directory's name in the path text differs (same length).
HEADER=1280x52+0+0
FUZZ=8%
MAX_HEADER_DIFF=1200 # of 66,560 pixels: a dozen differing characters of the path
MAX_SCREEN_DIFF=4000 # of 1,024,000: the path twice

need_tools Xvfb xwininfo import convert compare dpkg-deb dpkg node unshare ip
mkdir -p "$ARTIFACTS" "$tmp/root"

version=$(node -p "require('$ROOT/tauri.conf.json').version")
case "$(dpkg --print-architecture)" in
  amd64) platform=linux-x86_64 ;;
  arm64) platform=linux-aarch64 ;;
  *) fail "no updater platform name for $(dpkg --print-architecture)" ;;
esac

# --- build: scripts/release with a throwaway key pair (never the release key) ----------------
# Two TEST builds, with a config merged over tauri.conf.json: the throwaway public key (the app
# must verify what the throwaway private key signed) and plain-http update endpoints allowed (the
# loopback update server has no TLS). The first is installed; the second, one patch version newer,
# is the update it receives (tests/desktop/update.mjs). Neither setting is in the shipped config
# (tests/updater.rs checks that).
case ${KILN_DEB_PROFILE:-debug} in
  debug) profile_flag=(--debug) ;;
  release) profile_flag=() ;;
  *) fail "KILN_DEB_PROFILE is '$KILN_DEB_PROFILE': debug (the default) or release" ;;
esac
newer=$(node -p 'const [a, b, c] = process.argv[1].split("."); `${a}.${b}.${Number(c) + 1}`' "$version")
base_url=http://127.0.0.1:9/kiln
if [[ -n ${KILN_DEB_RELEASE_DIR:-} ]]; then
  dist=$KILN_DEB_RELEASE_DIR
  pubkey_file=$dist/key.pub
  say "reusing $dist"
else
  "$ROOT/ui/node_modules/.bin/tauri" signer generate --ci -p "" -w "$tmp/key" >/dev/null
  pubkey_file=$tmp/key.pub
  dist=$tmp/dist
  mkdir -p "$dist"
  cp "$pubkey_file" "$dist/key.pub"
  for build in installed update; do
    node -e '
      const [pubkeyFile, build, newer] = process.argv.slice(1);
      const pubkey = require("fs").readFileSync(pubkeyFile, "utf8").trim();
      const config = { plugins: { updater: { pubkey, dangerousInsecureTransportProtocol: true } } };
      if (build === "update") config.version = newer;
      console.log(JSON.stringify(config));' "$pubkey_file" "$build" "$newer" >"$tmp/$build.conf.json"
    notes="deb test build"
    [[ $build == update ]] && notes="Kiln $newer: the update tests/desktop/update.mjs installs."
    started=$SECONDS
    TAURI_SIGNING_PRIVATE_KEY=$(cat "$tmp/key") TAURI_SIGNING_PRIVATE_KEY_PASSWORD="" \
      "$ROOT/scripts/release" "${profile_flag[@]}" --bundles deb --channel test --base-url "$base_url" --config "$tmp/$build.conf.json" \
      --notes "$notes" --out "$dist/$build" || fail "scripts/release ($build build) failed"
    say "scripts/release ($build build) took $((SECONDS - started)) s"
  done
  if [[ -n ${KILN_DEB_KEEP_DIR:-} ]]; then
    rm -rf "$KILN_DEB_KEEP_DIR" && cp -a "$dist" "$KILN_DEB_KEEP_DIR" && say "kept the builds in $KILN_DEB_KEEP_DIR"
  fi
fi
release=$dist/installed/test
update=$dist/update/test
debs=("$release"/*_"$version"_*.deb)
[[ -f ${debs[0]} && ${#debs[@]} == 1 ]] || fail "want one .deb of version $version in $release, found: ${debs[*]}"
deb=${debs[0]}
say "$deb ($(du -h "$deb" | cut -f1))"

# --- the package's metadata ------------------------------------------------------------------
field() { dpkg-deb -f "$deb" "$1"; }
[[ $(field Package) == kiln ]] || fail "Package is '$(field Package)', want kiln"
[[ $(field Version) == "$version" ]] || fail "Version is '$(field Version)', want $version"
[[ $(field Architecture) == "$(dpkg --print-architecture)" ]] || fail "Architecture is '$(field Architecture)'"
[[ $(field Section) == devel ]] || fail "Section is '$(field Section)', want devel"
depends=$(field Depends)
for dep in libwebkit2gtk-4.1-0 libgtk-3-0 git libayatana-appindicator3-1; do
  [[ ", $depends," == *", $dep"[,\ ]* ]] || fail "Depends ($depends) lacks $dep"
done
[[ -n $(field Description) ]] || fail "no Description"
ok "metadata: kiln $version $(field Architecture), section devel, depends $depends"

# --- its files: the binary, the desktop entry, one icon per size -----------------------------
dpkg-deb -c "$deb" | awk '{ sub(/^\.?\//, "", $NF); print $NF }' >"$tmp/files"
for f in usr/bin/kiln usr/share/applications/Kiln.desktop; do
  grep -qxF "$f" "$tmp/files" || fail "the .deb has no $f: $(tr '\n' ' ' <"$tmp/files")"
done
dpkg -x "$deb" "$tmp/root"
entry=$tmp/root/usr/share/applications/Kiln.desktop
for line in 'Type=Application' 'Name=Kiln' 'Exec=kiln' 'Icon=kiln' 'Categories=Development;' 'Terminal=false'; do
  grep -qxF "$line" "$entry" || fail "the desktop entry lacks '$line':$(printf '\n%s' "$(cat "$entry")")"
done
if command -v desktop-file-validate >/dev/null; then
  desktop-file-validate "$entry" || fail "desktop-file-validate rejects the desktop entry"
fi
icons=0
for size in 32x32 64x64 128x128 256x256@2 512x512; do
  icon=$tmp/root/usr/share/icons/hicolor/$size/apps/kiln.png
  [[ -f $icon ]] || fail "no icon $size (usr/share/icons/hicolor/$size/apps/kiln.png)"
  want=${size%@2}
  [[ $size == 256x256@2 ]] && want=256x256
  got=$(identify -format %wx%h "$icon")
  [[ $got == "$want" ]] || fail "icon $size is $got"
  icons=$((icons + 1))
done
ok "files: /usr/bin/kiln, the desktop entry (Exec, Icon, Categories), $icons icons of the right sizes"

# The bundler writes the bundle type into the binary (the updater picks its installer by it).
grep -qa __TAURI_BUNDLE_TYPE_VAR_DEB "$tmp/root/usr/bin/kiln" || fail "the packaged binary is not marked as a deb install"
ok "the packaged binary is marked as installed from a .deb"

# --- latest.json and the signature ------------------------------------------------------------
# The .sig holds a minisign signature (base64 of its text): Ed25519 over the BLAKE2b-512 hash of
# the file ('ED'), by the key whose id it names; tauri-plugin-updater checks it the same way.
node - "$release/latest.json" "$deb" "$pubkey_file" "$version" "$platform" <<'EOF' || fail "latest.json or the signature is wrong"
const fs = require("fs");
const crypto = require("crypto");
const path = require("path");
const [manifestFile, deb, pubkeyFile, version, platform] = process.argv.slice(2);
const die = (m) => { console.error("desktop deb: " + m); process.exit(1); };
const manifest = JSON.parse(fs.readFileSync(manifestFile, "utf8"));
if (manifest.version !== version) die(`latest.json version ${manifest.version}, want ${version}`);
if (typeof manifest.notes !== "string") die("latest.json has no notes");
if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(manifest.pub_date)) die(`pub_date ${manifest.pub_date} is not RFC 3339`);
const sig = fs.readFileSync(deb + ".sig", "utf8").trim();
for (const key of [`${platform}-deb`, platform]) {
  const entry = manifest.platforms?.[key];
  if (!entry) die(`latest.json has no platforms["${key}"]: ${Object.keys(manifest.platforms ?? {})}`);
  if (entry.signature !== sig) die(`platforms["${key}"].signature is not the .sig's content`);
  if (entry.url !== "http://127.0.0.1:9/kiln/test/" + encodeURIComponent(path.basename(deb)))
    die(`platforms["${key}"].url is ${entry.url}`);
}
const lines = (b64) => Buffer.from(b64, "base64").toString("utf8").split("\n");
const sigLines = lines(sig);
const raw = Buffer.from(sigLines[1], "base64");
const pub = Buffer.from(lines(fs.readFileSync(pubkeyFile, "utf8").trim())[1], "base64");
if (raw.subarray(0, 2).toString() !== "ED") die("the signature is not a prehashed (ED) minisign signature");
if (!raw.subarray(2, 10).equals(pub.subarray(2, 10))) die("the signature names another key id");
const key = crypto.createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: pub.subarray(10).toString("base64url") }, format: "jwk" });
const hash = crypto.createHash("blake2b512").update(fs.readFileSync(deb)).digest();
if (!crypto.verify(null, hash, key, raw.subarray(10, 74))) die("the signature does not verify against the public key");
const tampered = Buffer.from(hash); tampered[0] ^= 1;
if (crypto.verify(null, tampered, key, raw.subarray(10, 74))) die("the check accepts a changed file");
// The trusted comment is signed too (its global signature): over signature || comment.
const trusted = sigLines[2].replace(/^trusted comment: /, "");
// The signature names the version it was made for: with requireSignedVersion the app refuses an
// old build offered as a newer one, and one whose signature names no version at all.
if (!trusted.split("\t").includes(`version:${version}`)) die(`the signature's trusted comment does not name version ${version}: ${trusted}`);
const global = Buffer.from(sigLines[3], "base64");
if (!crypto.verify(null, Buffer.concat([raw.subarray(10, 74), Buffer.from(trusted)]), key, global))
  die("the trusted comment's signature does not verify");
EOF
ok "latest.json: version $version, $platform-deb and $platform point at the .deb with the .sig's signature, which verifies and names the version"

# --- the installed binary on Xvfb -------------------------------------------------------------
start_xvfb
copy_shop "$tmp/shop"
# Its own network namespace with only loopback: the installed app cannot reach any other address
# (X is reached through its socket file, which the namespace does not hide).
netns=(unshare -n)
((EUID == 0)) || netns=(unshare -rn)
"${netns[@]}" true 2>/dev/null || fail "cannot make a network namespace (${netns[*]})"
launch_app "${netns[@]}" sh -c 'ip link set lo up && exec "$@"' sh "$tmp/root/usr/bin/kiln" --workspace "$tmp/shop"
wait_window
# The workspace's .kiln is made as the engine opens it, which may be after the window appears.
wait_for "$tmp/shop/.kiln (the workspace opened)" "$STATE_TIMEOUT" test -d "$tmp/shop/.kiln"
shot=$ARTIFACTS/deb-dashboard.png
wait_render "$shot"
assert_not_blank "$shot" "$MIN_CHANGED_PIXELS"
ok "the installed binary renders: $shot"

# The dashboard's layout, against the debug build's window in the smoke test.
smoke=$ARTIFACTS/desktop.png
[[ -f $smoke ]] || fail "no $smoke to compare the layout with: run tests/desktop/smoke.sh first"
convert "$smoke" -crop "$HEADER" +repage "$tmp/smoke-header.png"
convert "$shot" -crop "$HEADER" +repage "$tmp/deb-header.png"
header_diff=$(compare -metric AE -fuzz "$FUZZ" "$tmp/smoke-header.png" "$tmp/deb-header.png" "$ARTIFACTS/deb-header-diff.png" 2>&1 || true)
screen_diff=$(compare -metric AE -fuzz "$FUZZ" "$smoke" "$shot" null: 2>&1 || true)
say "layout against $smoke (fuzz $FUZZ): header $header_diff pixels differ (max $MAX_HEADER_DIFF), screen $screen_diff (max $MAX_SCREEN_DIFF)"
awk -v n="$header_diff" -v max="$MAX_HEADER_DIFF" 'BEGIN { exit !(n ~ /^[0-9.e+]+$/ && n + 0 <= max) }' ||
  fail "the header differs from the smoke screenshot's in $header_diff pixels (see $ARTIFACTS/deb-header-diff.png)"
awk -v n="$screen_diff" -v max="$MAX_SCREEN_DIFF" 'BEGIN { exit !(n ~ /^[0-9.e+]+$/ && n + 0 <= max) }' ||
  fail "the dashboard differs from the smoke screenshot's in $screen_diff pixels"
ok "the dashboard is laid out as in the debug build"

# --- the installed app receives the newer build ------------------------------------------------
stop_app
[[ -f $update/latest.json ]] || fail "no newer release in $update"
timeout --kill-after=30 600 "${netns[@]}" sh -c 'ip link set lo up && exec node "$@"' sh "$ROOT/tests/desktop/update.mjs" \
  --installed "$tmp/root" --release "$update" --base-url "$base_url" || fail "the installed app did not update itself (tests/desktop/update.mjs)"
ok "the installed app updated itself to $newer (tests/desktop/update.mjs)"

done_passed

#!/usr/bin/env bash
# The bench part `turn`: one turn of the real claude CLI against the scripted model server, bare and
# through Kiln (tests/bench/turn.mjs says what is timed), in a loopback-only network namespace as the
# contract and browser tests run the real CLIs: the CLI can reach nothing but the model server.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
measure="Kiln's overhead on one turn (real claude CLI, scripted model)"
goal="≤ 1.1× the bare CLI + 150 ms"
if ! command -v unshare >/dev/null || ! unshare -n true 2>/dev/null; then
  printf 'bench-row\t%s\tunmeasured: cannot make a loopback-only network namespace (unshare -n)\t—\t%s\tunmeasured\n' "$measure" "$goal"
  exit 0
fi
export KILN_AGENT_CLI_DIR=${KILN_AGENT_CLI_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kiln/agent-cli}
exec unshare -n sh -c 'ip link set lo up && exec node tests/bench/turn.mjs'

// A realistic two-turn session's transcript in the engine's exact formats (turn.rs, chain.rs, gates.rs, planner.rs), for the folding tests and screenshots.
import type { EntryKind, TranscriptEntry } from "../api/types";

const WS = "/home/dev/shop/.kiln/sessions/s1/workspace";
const FE = "frontend-engineer";
const MOD = "@shop/catalog";

/** Builds entries with increasing ids and times. */
export function entryMaker(sessionId = "s1") {
  let id = 0;
  return (kind: EntryKind, text: string, role: string | null = null, module: string | null = MOD): TranscriptEntry => {
    id++;
    const at = new Date(Date.UTC(2026, 0, 5, 10, 0, id)).toISOString();
    return { id, sessionId, kind, module, role, text, createdAt: at };
  };
}

function gates(e: ReturnType<typeof entryMaker>, testsFail: boolean): TranscriptEntry[] {
  return [
    e("gate", "**typecheck** passed in `@shop/catalog` — `npx tsc --noEmit` (2.1 s) · from package.json", null),
    e("gate", "**lint** passed in `@shop/catalog` — `npx eslint .` (1.4 s) · from package.json", null),
    testsFail
      ? e(
          "gate",
          "**tests** failed in `@shop/catalog` — `npm test` (3.8 s) · from package.json\n\n```\n✗ card shows a heart\n  expected 1 heart, found 0\n1 failing, 11 passing\n```",
          null,
        )
      : e("gate", "**tests** passed in `@shop/catalog` — `npm test` (3.6 s) · from package.json", null),
    e("gate", "**build** passed in `@shop/catalog` — `npm run build` (4.0 s) · from package.json", null),
    e("gate", "**format** passed in `@shop/catalog` — `npx prettier --check .` (0.9 s) · from package.json", null),
    e("gate", "**spec** passed in `@shop/catalog` (Kiln checks spec)", null),
  ];
}

/** Planner, one user message, a frontend turn (5 tool calls, a put-back edit, a failed tests gate), the fix turn (3 tool calls), the review. */
export function twoTurnSession(): TranscriptEntry[] {
  const e = entryMaker();
  return [
    e(
      "system",
      "**Planner** — edit `@shop/catalog`.\n\n- `@shop/catalog` (primary): the brief names it.\n\nFound by the planner's rules; the planner agent is looking at the brief now.",
    ),
    e(
      "system",
      "**Planner agent** — agrees with the rules; suggests **Frontend Engineer** first.\n\nThe wishlist starts on the product cards.",
      null,
      null,
    ),
    e("system", "Installing dependencies: `npm install` (from package.json)", null, null),
    e("gate", "**dependencies** passed — `npm install` (6.2 s) · from package.json", null, null),
    e("user", "Add a wishlist heart to each product card", FE),
    e(
      "system",
      "Routed to **Frontend Engineer**: the session was waiting for it (a question, a paused chain or the planner's suggestion).",
    ),
    e("system", "**Frontend Engineer** takes the turn in `@shop/catalog`.", FE),
    e("agent", "I'll start with the product card component.", FE),
    e("tool", `**read** \`Read ${WS}/modules/catalog/src/client/card.js\``, FE),
    e(
      "tool",
      "↳ done\n\n```\n1\texport function card(product) {\n2\t  return `<li>${product.name}</li>`;\n3\t}\n```",
      FE,
    ),
    e("tool", `**edit** \`Edit ${WS}/modules/catalog/src/client/card.js\``, FE),
    e(
      "tool",
      '↳ done\n\n```\n--- a/modules/catalog/src/client/card.js\n+++ b/modules/catalog/src/client/card.js\n@@ -1,3 +1,4 @@\n export function card(product) {\n-  return `<li>${product.name}</li>`;\n+  const heart = wishlist.has(product.id) ? "♥" : "♡";\n+  return `<li>${product.name} ${heart}</li>`;\n }\n```',
      FE,
    ),
    e("tool", `**update** \`${WS}/modules/catalog/src/client/card.js\``, FE),
    e("tool", `**edit** \`Write ${WS}/modules/catalog/src/client/wishlist.js\``, FE),
    e(
      "tool",
      `↳ done\n\n\`\`\`\nFile created successfully at: ${WS}/modules/catalog/src/client/wishlist.js\n\`\`\``,
      FE,
    ),
    e("tool", `**add** \`${WS}/modules/catalog/src/client/wishlist.js\``, FE),
    e("tool", `**edit** \`Edit ${WS}/package.json\``, FE),
    e("tool", `↳ done\n\n\`\`\`\nThe file ${WS}/package.json has been updated.\n\`\`\``, FE),
    e("tool", `**update** \`${WS}/package.json\``, FE),
    e("tool", "**execute** `npm test`", FE),
    e("tool", "↳ done\n\n```\n12 passing (1.1 s)\n```", FE),
    e(
      "agent",
      "Added a wishlist heart to each product card.\n\nHANDOFF: none - the wishlist is on the catalog screen",
      FE,
    ),
    e(
      "system",
      "Put back 1 change(s) outside what **Frontend Engineer** may change in `modules/catalog`:\n- `package.json`",
    ),
    e("handoff", "**frontend-engineer → none**: the wishlist is on the catalog screen", FE),
    ...gates(e, true),
    e(
      "handoff",
      "**gate `tests` → frontend-engineer**: it failed in `@shop/catalog`; the same role fixes it first",
      FE,
    ),
    e("system", "Routed to **Frontend Engineer**: the `tests` gate failed after its turn."),
    e("system", "**Frontend Engineer** takes the turn in `@shop/catalog`.", FE),
    e("tool", "**execute** `npm test`", FE),
    e("tool", "↳ failed\n\n```\n✗ card shows a heart\n  expected 1 heart, found 0\n1 failing, 11 passing\n```", FE),
    e("tool", `**edit** \`Edit ${WS}/modules/catalog/test/card.test.js\``, FE),
    e("tool", "↳ done", FE),
    e("tool", `**update** \`${WS}/modules/catalog/test/card.test.js\``, FE),
    e("tool", "**execute** `npm test`", FE),
    e("tool", "↳ done\n\n```\n12 passing (1.0 s)\n```", FE),
    e(
      "agent",
      "The test looked for the heart before the wishlist loaded; it waits for it now.\n\n**HANDOFF: none** - tests pass",
      FE,
    ),
    e("handoff", "**frontend-engineer → none**: tests pass", FE),
    ...gates(e, false),
    e("system", "**Frontend Engineer** reviews `@shop/catalog` before it can be delivered (read-only).", FE),
    e(
      "agent",
      "Correctness, security, compatibility, lifecycle, tests and UI checked.\n\nREVIEW: pass - the wishlist works",
      FE,
    ),
    e("handoff", "**review → pass**: the wishlist works", FE),
    e("system", "The review passed: ready for review and delivery."),
  ];
}

/** A turn that could not start and then failed on the provider: the same error three times, codes and a Blocked line. */
export function failingSession(): TranscriptEntry[] {
  const e = entryMaker("s2");
  return [
    e("user", "Add a wishlist", FE),
    e("system", "The turn for your message could not start: claude is not installed or not on PATH [DRIVER_NOT_FOUND]"),
    e("system", "The turn for your message could not start: claude is not installed or not on PATH [DRIVER_NOT_FOUND]"),
    e("system", "The turn for your message could not start: claude is not installed or not on PATH [DRIVER_NOT_FOUND]"),
    e("user", "Try again", FE),
    e("system", "**Frontend Engineer** takes the turn in `@shop/catalog`.", FE),
    e("system", "The agent reported: API Error: 401 invalid x-api-key", FE),
    e(
      "handoff",
      "**Blocked**: the Frontend Engineer turn failed: The model provider refused the credentials (401). API Error: 401 invalid x-api-key",
      FE,
    ),
  ];
}

#!/usr/bin/env python3
# Bench-only seeding for tests/bench/transcript.mjs: appends N transcript entries to one session of a
# stopped `kiln serve`'s kiln.db, as the rows the engine's store writes for a turn
# (src-tauri/engine/src/store/transcript_entries.rs, texts shaped as turn.rs records them: agent
# markdown, "**kind** `title`" tool calls, "↳ done" results with their fenced output, "**update**
# `path`" file changes, gate runs, the operator's messages). Driving that many entries through a real
# turn would take the scripted model server hours on this machine; the rows are the same either way.
#
#   seed-transcript.py DB SESSION MODULE COUNT MARKER
#
# The last entry is an agent message ending in MARKER, so the page can tell when the newest entry shows.
import sqlite3
import sys
from datetime import datetime, timedelta, timezone

AGENT_TEXT = """I read through `{path}` and the tests beside it. The card renders the price before the
title, so the wishlist heart goes **after the price**, inside the same flex row:

```js
export function renderCard(product, {{ onWish }}) {{
  const card = el("article", {{ class: "card" }});
  card.append(el("h3", {{}}, product.title));
  card.append(el("span", {{ class: "price" }}, formatPrice(product.price)));
  const heart = el("button", {{ class: "wish", "aria-label": "Add to wishlist" }}, "♡");
  heart.addEventListener("click", () => onWish(product.id));
  card.append(heart);
  return card;
}}
```

Next steps:

1. Keep the wishlist in `localStorage` under `shop.wishlist` (step {n}).
2. Show the count in the header, next to the cart.
3. Add a test for toggling the same product twice.

| file | change |
|---|---|
| `{path}` | the heart button |
| `test/card.test.js` | a toggle test |
"""

TEST_OUTPUT = """> catalog@1.0.0 test
> node --test

✔ renders the title (1.2ms)
✔ renders the price (0.4ms)
✔ toggles the wishlist (0.8ms)
ℹ tests 3
ℹ pass 3
ℹ fail 0
ℹ duration_ms 61.5"""

FILE_BODY = "\n".join(f"  line {i}: const value{i} = compute({i}, options);" for i in range(1, 25))

PATHS = ["src/client/card.js", "src/client/list.js", "src/server/routes.js", "test/card.test.js"]


def cycle(n):
    """One stretch of a turn: (kind, role, text) for ten entries, varied by n."""
    path = PATHS[n % len(PATHS)]
    return [
        ("user", None, f"Now make the wishlist survive a reload (request {n})."),
        ("agent", "frontend-engineer", AGENT_TEXT.format(path=path, n=n)),
        ("tool", "frontend-engineer", f"**read** `{path}`"),
        ("tool", "frontend-engineer", f"↳ done\n\n```\n{FILE_BODY}\n```"),
        ("tool", "frontend-engineer", f"**edit** `Edit {path}`"),
        ("tool", "frontend-engineer", "↳ done"),
        ("tool", "frontend-engineer", f"**update** `{path}`"),
        ("tool", "frontend-engineer", "**execute** `npm test`"),
        ("tool", "frontend-engineer", f"↳ done\n\n```\n{TEST_OUTPUT}\n```"),
        ("agent", "frontend-engineer", f"The tests pass; the wishlist keeps its items across reloads (step {n})."),
    ]


def main():
    db, session, module, count, marker = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
    entries = []
    n = 0
    while len(entries) < count:
        entries.extend(cycle(n))
        n += 1
    entries = entries[:count]
    entries[-1] = ("agent", "frontend-engineer", f"Done for now: the wishlist is in place. {marker}")
    start = datetime.now(timezone.utc) - timedelta(seconds=count)
    rows = []
    for i, (kind, role, text) in enumerate(entries):
        at = (start + timedelta(seconds=i)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        rows.append((session, kind, module, role, text, at))
    con = sqlite3.connect(db)
    with con:
        con.executemany(
            "INSERT INTO transcript_entries (session_id, kind, module_id, role, text, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            rows,
        )
    con.close()


if __name__ == "__main__":
    main()

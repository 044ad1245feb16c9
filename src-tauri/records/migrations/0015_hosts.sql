-- Several hosts serving one team's sessions (issue 21). Only a server on a team's PostgreSQL
-- uses these tables; SQLite carries them so the two schemas stay one (tests/it/store_schema.rs).
-- Times that decide ownership are milliseconds of the database's clock, never a host's.

-- Each host serving the database, with its last heartbeat.
CREATE TABLE hosts (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    started_at    TEXT NOT NULL,
    heartbeat_ms  INTEGER NOT NULL
);

-- The one host that runs a session's turns, gates and preview, until `expires_ms`; the owner
-- renews it with its heartbeat. `running` mirrors the owner's last word on the session, so a
-- view on another host says whether it is at work.
CREATE TABLE session_leases (
    session_id  TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    host_id     TEXT NOT NULL,
    expires_ms  INTEGER NOT NULL,
    running     INTEGER NOT NULL,
    taken_at    TEXT NOT NULL
);
CREATE INDEX session_leases_by_host ON session_leases(host_id);

-- The event stream shared between hosts: each host writes what it emits, and reads (by id)
-- what the others emitted. `kept` is false for what is only true now (live activity).
CREATE TABLE host_events (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    host_id   TEXT NOT NULL,
    body      TEXT NOT NULL,
    kept      INTEGER NOT NULL,
    at_ms     INTEGER NOT NULL
);

-- Operations on a session asked of a host that does not own it, for its owner to run: taken
-- with FOR UPDATE SKIP LOCKED, up to the owner's limit at once. `outcome` is the operation's
-- JSON result or error, read by the host that asked.
CREATE TABLE work_items (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id   TEXT NOT NULL,
    operation    TEXT NOT NULL,
    args         TEXT NOT NULL,
    asked_by     TEXT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('queued', 'taken', 'done')),
    taken_by     TEXT,
    outcome      TEXT,
    created_at   TEXT NOT NULL,
    finished_at  TEXT
);
CREATE INDEX work_items_queued ON work_items(state, session_id);

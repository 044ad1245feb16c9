-- Turns with their usage (SPEC §7, §14), specification approvals (SPEC §6) and the
-- workspace's driver settings (keys stored sealed, never plain).

CREATE TABLE turns (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id       TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    module_id        TEXT NOT NULL,
    role             TEXT NOT NULL,
    driver           TEXT NOT NULL,
    model            TEXT,
    chain_index      INTEGER NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'stopped')),
    started_at       TEXT NOT NULL,
    ended_at         TEXT,
    input_tokens     INTEGER NOT NULL DEFAULT 0,
    output_tokens    INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    -- NULL is unknown (the provider reported no cost), never free.
    cost_usd         REAL
);

CREATE INDEX turns_by_session ON turns (session_id, id);

CREATE TABLE spec_approvals (
    session_id   TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    module_id    TEXT NOT NULL,
    digest       TEXT NOT NULL,
    approved_at  TEXT NOT NULL,
    PRIMARY KEY (session_id, module_id)
);

CREATE TABLE settings (
    key    TEXT PRIMARY KEY NOT NULL,
    value  TEXT NOT NULL
);

-- The role the next operator message goes to when none is picked: the role that asked
-- a question, or the one a "Continue with <role>" offers.
ALTER TABLE sessions ADD COLUMN pending_role TEXT;

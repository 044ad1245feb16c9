-- Gates detected from the repository's own tooling (SPEC §10): each result says where its
-- command came from, and a gate with no command is `not-configured`, a state of its own.
-- SQLite cannot change a CHECK constraint in place, so the table is rebuilt.
CREATE TABLE gate_results_new (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id     TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    module_id      TEXT,
    gate           TEXT NOT NULL,
    command        TEXT NOT NULL,
    source         TEXT NOT NULL DEFAULT '',
    status         TEXT NOT NULL CHECK (status IN ('passed', 'failed', 'skipped', 'not-configured')),
    exit_code      INTEGER,
    duration_ms    INTEGER NOT NULL,
    output_head    TEXT NOT NULL,
    output_tail    TEXT NOT NULL,
    created_at     TEXT NOT NULL
);
INSERT INTO gate_results_new (id, session_id, module_id, gate, command, status, exit_code, duration_ms, output_head, output_tail, created_at)
    SELECT id, session_id, module_id, gate, command, status, exit_code, duration_ms, output_head, output_tail, created_at FROM gate_results;
DROP TABLE gate_results;
ALTER TABLE gate_results_new RENAME TO gate_results;
CREATE INDEX gate_results_session ON gate_results (session_id, gate, module_id);

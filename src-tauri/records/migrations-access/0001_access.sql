-- Who may use a `kiln serve`: access tokens made by `kiln token create` and the
-- browser sessions they open. Only SHA-256 hashes of the secrets are stored, so this
-- file alone lets no one in. Times are Unix seconds.
CREATE TABLE access_tokens (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    hash        TEXT NOT NULL UNIQUE,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER,
    revoked_at  INTEGER
);

CREATE TABLE browser_sessions (
    hash        TEXT PRIMARY KEY,
    -- NULL for a loopback connection, which needs no token.
    token_id    TEXT REFERENCES access_tokens(id),
    mode        TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    ended_at    INTEGER
);

CREATE INDEX browser_sessions_token ON browser_sessions(token_id);

-- Who may use a team's `kiln serve` hosts (`--database`): the access tokens `kiln token create
-- --database` makes and the browser sessions they open, shared by every host so a browser's
-- cookie holds whichever host the proxy sends it to. In the `kiln_access` schema, beside the
-- records. Only SHA-256 hashes of the secrets are stored. Times are Unix seconds. The same
-- tables as migrations-access/ for SQLite.
CREATE TABLE access_tokens (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    hash        TEXT NOT NULL UNIQUE,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT,
    revoked_at  BIGINT
);

CREATE TABLE browser_sessions (
    hash        TEXT PRIMARY KEY,
    -- NULL for a loopback connection, which needs no token.
    token_id    TEXT REFERENCES access_tokens(id),
    mode        TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    ended_at    BIGINT
);

CREATE INDEX browser_sessions_token ON browser_sessions(token_id);

// The Connect screen of `kiln serve`: a token (a loopback server's own, or an access token) opens a browser session, then the app loads.
import { type FormEvent, useEffect, useState } from "react";
import { KilnError, toKilnError } from "../../api/backend";
import type { ServeMode } from "../../api/types";
import { ErrorMessage } from "../../components/ErrorMessage";
import type { ConnectReason } from "../../state/connection";
import { useStore } from "../../state/store";

const MODE_SENTENCE: Record<ServeMode, string> = {
  "self-hosted": "This Kiln server is self-hosted: it shows nothing until this browser connects with an access token.",
  loopback:
    "This Kiln server answers only on this machine, and only to a browser with its token: any program here can reach it, the commands agents run among them.",
};

const TOKEN_LABEL: Record<ServeMode, string> = { "self-hosted": "Access token", loopback: "Server token" };

const REASON_NOTE: Record<ConnectReason, string | null> = {
  start: null,
  link: "This link's token was not accepted: the server has been restarted since it printed it. Use the link it printed last.",
  lost: "Your browser session ended (it expired, or its token was revoked). Connect again to carry on; unsent messages are kept.",
  disconnected: "You disconnected this browser.",
};

/** The message shown for a refused connect; `secondsLeft` counts down a RATE_LIMITED wait. */
export function connectErrorMessage(error: KilnError, secondsLeft: number | null): string {
  if (error.code === "TOKEN_INVALID") return "The server did not accept this token: it is unknown, expired or revoked.";
  if (error.code === "RATE_LIMITED") {
    const wait =
      secondsLeft !== null && secondsLeft > 0 ? `Try again in ${secondsLeft} s.` : "Wait a minute, then try again.";
    return `Too many failed attempts from this address. ${wait}`;
  }
  return error.message;
}

/** Seconds left until `until` (ms since the epoch), ticking every second; null without a deadline. */
function useCountdown(until: number | null): number | null {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (until === null) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [until]);
  // `now` lags until the effect runs: never count from before the wait began.
  return until === null ? null : Math.max(0, Math.ceil((until - Math.max(now, Date.now())) / 1000));
}

export function ConnectScreen({ mode, reason }: { mode: ServeMode; reason: ConnectReason }) {
  const { connect } = useStore();
  const [token, setToken] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<KilnError | null>(null);
  const [waitUntil, setWaitUntil] = useState<number | null>(null);
  const secondsLeft = useCountdown(waitUntil);
  const waiting = secondsLeft !== null && secondsLeft > 0;
  const note = REASON_NOTE[reason];

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (!token.trim() || busy || waiting) return;
    setBusy(true);
    setError(null);
    try {
      await connect(token.trim());
    } catch (err) {
      const refused = toKilnError(err);
      setError(refused);
      const retry = refused.code === "RATE_LIMITED" ? refused.retryAfterSeconds : undefined;
      setWaitUntil(retry !== undefined ? Date.now() + retry * 1000 : null);
      setBusy(false);
    }
  }

  return (
    <section className="screen narrow" aria-labelledby="connect-title" data-testid="connect-screen">
      <h1 id="connect-title">Connect to Kiln</h1>
      <p className="lead">{MODE_SENTENCE[mode]}</p>
      {note && (
        <p className="hint warn-text" data-testid="connect-note">
          {note}
        </p>
      )}
      <form className="card form" onSubmit={(e) => void submit(e)}>
        <label className="field-label" htmlFor="connect-token">
          {TOKEN_LABEL[mode]}
        </label>
        <input
          id="connect-token"
          className="input"
          type="password"
          value={token}
          onChange={(e) => setToken(e.target.value)}
          placeholder={mode === "self-hosted" ? "kiln_…" : undefined}
          autoComplete="off"
          spellCheck={false}
          autoFocus
          data-testid="connect-token"
        />
        {mode === "self-hosted" ? (
          <p className="hint">
            Create a token on the server with <code>kiln token create</code>.
          </p>
        ) : (
          <p className="hint" data-testid="connect-hint">
            Open the link <code>kiln serve</code> printed when it started, or paste the token from the file it named (
            <code>loopback-&lt;port&gt;.token</code> in Kiln&apos;s config directory).
          </p>
        )}
        {error && (
          <ErrorMessage
            error={new KilnError(error.code, connectErrorMessage(error, secondsLeft))}
            testId="connect-error"
          />
        )}
        <div className="form-actions">
          <button
            type="submit"
            className="btn btn-primary"
            disabled={!token.trim() || busy || waiting}
            data-testid="connect-submit"
          >
            {busy ? "Connecting…" : "Connect"}
          </button>
        </div>
      </form>
    </section>
  );
}

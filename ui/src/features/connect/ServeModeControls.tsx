// The header's part for `kiln serve` in self-hosted mode: a "self-hosted" badge and Disconnect (with its error, if any).
import { useState } from "react";
import { toKilnError } from "../../api/backend";
import type { ServeMode } from "../../api/types";
import { Badge } from "../../components/StateBadge";

export interface ServeModeControlsProps {
  mode: ServeMode | null;
  /** Present while connected: ends the browser session. */
  onDisconnect?: () => Promise<void>;
}

export function ServeModeControls({ mode, onDisconnect }: ServeModeControlsProps) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  if (mode !== "self-hosted") return null;

  async function disconnect() {
    if (!onDisconnect) return;
    setBusy(true);
    setError(null);
    try {
      await onDisconnect();
    } catch (e) {
      setError(`Could not disconnect: ${toKilnError(e).message}`);
    } finally {
      setBusy(false);
    }
  }

  return (
    <>
      <Badge tone="info" testId="mode-badge">
        self-hosted
      </Badge>
      {error && (
        <span className="warn-text small" role="alert" data-testid="disconnect-error">
          {error}
        </span>
      )}
      {onDisconnect && (
        <button
          type="button"
          className="btn btn-small"
          onClick={() => void disconnect()}
          disabled={busy}
          data-testid="disconnect"
          title="End this browser's session with the server"
        >
          Disconnect
        </button>
      )}
    </>
  );
}

// Lifecycle buttons for one session (archive, restore, reject, delete) with their confirm dialogs.
import { useState } from "react";
import { type KilnError, toKilnError } from "../../api/backend";
import type { SessionView } from "../../api/types";
import { useStore } from "../../state/store";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { ErrorMessage } from "../../components/ErrorMessage";
import { lifecycleOf } from "../../components/StateBadge";

type Kind = "archive" | "reject" | "delete";
/** A dialog waiting for confirmation; `stop` when the session's agent or setup must be stopped. */
type Pending = { kind: Kind; stop: boolean } | null;

export interface SessionActionsProps {
  session: SessionView;
  /** Called after the session's record was removed by delete. */
  onRemoved?: () => void;
}

export function SessionActions({ session, onRemoved }: SessionActionsProps) {
  const { backend, dispatch } = useStore();
  const [pending, setPending] = useState<Pending>(null);
  const [keepTranscript, setKeepTranscript] = useState(true);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<KilnError | null>(null);

  const sessionId = session.id;
  const lifecycle = lifecycleOf(session);
  const tombstone = lifecycle === "deleted";
  const needsStop = session.running || session.setup === "running";
  const name = session.title || session.id;

  function request(kind: Kind, stop: boolean): Promise<SessionView | null> {
    const s = stop ? { stop: true } : {};
    if (kind === "archive") return backend.call("archive_session", { sessionId, ...s });
    if (kind === "reject") return backend.call("reject_session", { sessionId, ...s });
    return backend.call("delete_session", { sessionId, keepTranscript: tombstone ? false : keepTranscript, ...s });
  }

  async function perform(kind: Kind, stop: boolean) {
    setBusy(true);
    setError(null);
    try {
      const result = await request(kind, stop);
      setPending(null);
      if (result) dispatch({ type: "sessionUpserted", session: result });
      else {
        dispatch({ type: "sessionRemoved", sessionId });
        onRemoved?.();
      }
    } catch (e) {
      const err = toKilnError(e);
      // Our copy of the session was stale: it is running after all. Ask before stopping it.
      if (err.code === "SESSION_RUNNING" && !stop) setPending({ kind, stop: true });
      else {
        setPending(null);
        setError(err);
      }
    } finally {
      setBusy(false);
    }
  }

  const restore = async () => {
    setBusy(true);
    setError(null);
    try {
      dispatch({ type: "sessionUpserted", session: await backend.call("restore_session", { sessionId }) });
    } catch (e) {
      setError(toKilnError(e));
    } finally {
      setBusy(false);
    }
  };

  const canRestore = lifecycle === "archived" || lifecycle === "rejected";
  const canArchive = lifecycle === null;
  const delivered = session.state === "delivered" || session.deliveredAt !== null;
  const canReject = lifecycle === null && !delivered;

  return (
    <div className="actions" onClick={(e) => e.stopPropagation()}>
      {canArchive && (
        <button
          type="button"
          className="btn btn-small"
          data-testid="archive"
          disabled={busy}
          onClick={() => (needsStop ? setPending({ kind: "archive", stop: true }) : void perform("archive", false))}
        >
          Archive
        </button>
      )}
      {canRestore && (
        <button
          type="button"
          className="btn btn-small"
          data-testid="restore"
          disabled={busy}
          onClick={() => void restore()}
        >
          Restore
        </button>
      )}
      {canReject && (
        <button
          type="button"
          className="btn btn-small"
          data-testid="reject"
          disabled={busy}
          onClick={() => setPending({ kind: "reject", stop: needsStop })}
        >
          Reject
        </button>
      )}
      <button
        type="button"
        className="btn btn-small btn-danger-ghost"
        data-testid="delete"
        disabled={busy}
        onClick={() => {
          setKeepTranscript(true);
          setPending({ kind: "delete", stop: needsStop && !tombstone });
        }}
      >
        {tombstone ? "Remove" : "Delete"}
      </button>
      {error && <ErrorMessage error={error} />}
      {pending && (
        <ActionDialog
          kind={pending.kind}
          stop={pending.stop}
          name={name}
          tombstone={tombstone}
          busy={busy}
          keepTranscript={keepTranscript}
          onKeepTranscript={setKeepTranscript}
          onConfirm={() => void perform(pending.kind, pending.stop)}
          onCancel={() => setPending(null)}
        />
      )}
    </div>
  );
}

interface ActionDialogProps {
  kind: Kind;
  stop: boolean;
  name: string;
  tombstone: boolean;
  busy: boolean;
  keepTranscript: boolean;
  onKeepTranscript: (keep: boolean) => void;
  onConfirm: () => void;
  onCancel: () => void;
}

const VERB: Record<Kind, string> = { archive: "Archive", reject: "Reject", delete: "Delete" };

function ActionDialog(props: ActionDialogProps) {
  const { kind, stop, name, tombstone, busy, keepTranscript, onKeepTranscript, onConfirm, onCancel } = props;
  const verb = tombstone ? "Remove" : VERB[kind];
  const title = tombstone ? "Remove deleted session?" : `${verb} session?`;
  return (
    <ConfirmDialog
      title={title}
      confirmLabel={stop ? `Stop and ${verb.toLowerCase()}` : verb}
      danger={kind !== "archive"}
      busy={busy}
      onConfirm={onConfirm}
      onCancel={onCancel}
    >
      {kind === "archive" && (
        <p>
          Archive <strong>{name}</strong>? You can restore it later.
        </p>
      )}
      {kind === "reject" && (
        <p>
          Reject <strong>{name}</strong>? Its change will not be delivered. You can restore it later.
        </p>
      )}
      {kind === "delete" && tombstone && (
        <p>
          Remove what is left of <strong>{name}</strong>, its kept transcript included? This cannot be undone.
        </p>
      )}
      {kind === "delete" && !tombstone && (
        <>
          <p>
            Delete <strong>{name}</strong> and its working copy? This cannot be undone.
          </p>
          <label className="checkbox">
            <input
              type="checkbox"
              checked={keepTranscript}
              onChange={(e) => onKeepTranscript(e.target.checked)}
              data-testid="keep-transcript"
            />
            Keep transcript
          </label>
        </>
      )}
      {stop && <p className="warn-text">This session's agent or setup is running; it will be stopped.</p>}
    </ConfirmDialog>
  );
}

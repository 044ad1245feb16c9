// The update flow of the desktop app: "checking", "up to date", or the new version's release
// notes with Install; then a progress bar while it downloads and is verified, and Restart.
// A start-up check stays silent unless there is an update (or it fails only when asked for).
import { type ReactNode, useCallback, useEffect, useRef, useState } from "react";
import { type AvailableUpdate, describeUpdateError, type UpdaterDeps } from "../../lib/updater";
import { Md } from "../../components/Markdown";
import { Modal } from "../../components/Modal";

type Phase =
  | { name: "checking" }
  | { name: "none" }
  | { name: "available"; update: AvailableUpdate }
  | { name: "downloading"; update: AvailableUpdate; downloaded: number; total: number | null }
  | { name: "installed"; update: AvailableUpdate }
  | { name: "failed"; message: string };

export interface UpdateDialogProps {
  deps: UpdaterDeps;
  /** true for the start-up check: nothing shows unless an update is found. */
  quiet: boolean;
  onClose: () => void;
}

export function UpdateDialog({ deps, quiet, onClose }: UpdateDialogProps) {
  const [phase, setPhase] = useState<Phase>({ name: "checking" });
  const alive = useRef(true);
  useEffect(() => {
    alive.current = true;
    deps
      .check()
      .then((update) => {
        if (!alive.current) return;
        if (update) setPhase({ name: "available", update });
        else if (quiet) onClose();
        else setPhase({ name: "none" });
      })
      .catch((e: unknown) => {
        if (!alive.current) return;
        if (quiet) {
          console.warn("kiln: update check failed", e);
          onClose();
        } else setPhase({ name: "failed", message: describeUpdateError(e, "check") });
      });
    return () => {
      alive.current = false;
    };
    // One check per dialog.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  const install = useCallback(async (update: AvailableUpdate) => {
    setPhase({ name: "downloading", update, downloaded: 0, total: null });
    try {
      await update.install((downloaded, total) => {
        if (alive.current) setPhase({ name: "downloading", update, downloaded, total });
      });
      if (alive.current) setPhase({ name: "installed", update });
    } catch (e) {
      if (alive.current) setPhase({ name: "failed", message: describeUpdateError(e, "install") });
    }
  }, []);

  if (quiet && (phase.name === "checking" || phase.name === "none")) return null;
  const busy = phase.name === "downloading";
  const close = busy ? () => {} : onClose;

  let body: ReactNode;
  let footer: ReactNode;
  switch (phase.name) {
    case "checking":
      body = <p data-testid="update-checking">Checking for updates…</p>;
      footer = (
        <button type="button" className="btn" onClick={onClose}>
          Cancel
        </button>
      );
      break;
    case "none":
      body = <p data-testid="update-none">Kiln is up to date.</p>;
      footer = (
        <button type="button" className="btn" onClick={onClose}>
          Close
        </button>
      );
      break;
    case "available":
      body = (
        <div data-testid="update-available">
          <p>
            Kiln <strong>{phase.update.version}</strong> is available (you have {phase.update.currentVersion}).
          </p>
          <h3>What's new</h3>
          <div className="update-notes" data-testid="update-notes">
            {phase.update.notes.trim() ? <Md text={phase.update.notes} /> : <p>No release notes.</p>}
          </div>
        </div>
      );
      footer = (
        <>
          <button type="button" className="btn" onClick={onClose}>
            Later
          </button>
          <button type="button" className="btn btn-primary" onClick={() => void install(phase.update)}>
            Download and install
          </button>
        </>
      );
      break;
    case "downloading": {
      const percent = phase.total ? Math.min(100, Math.round((phase.downloaded / phase.total) * 100)) : null;
      body = (
        <div data-testid="update-downloading">
          <p>Downloading Kiln {phase.update.version}…</p>
          <progress
            aria-label="Download progress"
            max={phase.total ?? undefined}
            value={phase.total ? phase.downloaded : undefined}
          />
          <p className="hint">
            {percent !== null ? `${percent}%` : `${Math.round(phase.downloaded / 1024)} KB`} — the signature is verified
            before it is installed.
          </p>
        </div>
      );
      footer = null;
      break;
    }
    case "installed":
      body = (
        <p data-testid="update-installed">Kiln {phase.update.version} is installed and verified. Restart to use it.</p>
      );
      footer = (
        <>
          <button type="button" className="btn" onClick={onClose}>
            Later
          </button>
          <button
            type="button"
            className="btn btn-primary"
            onClick={() =>
              deps
                .relaunch()
                .catch((e: unknown) => setPhase({ name: "failed", message: describeUpdateError(e, "install") }))
            }
          >
            Restart now
          </button>
        </>
      );
      break;
    case "failed":
      body = (
        <p className="error" role="alert" data-testid="update-failed">
          {phase.message}
        </p>
      );
      footer = (
        <button type="button" className="btn" onClick={onClose}>
          Close
        </button>
      );
      break;
  }
  return (
    <Modal title="Software update" onClose={close} footer={footer}>
      {body}
    </Modal>
  );
}

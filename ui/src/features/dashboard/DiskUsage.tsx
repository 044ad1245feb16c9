// The dashboard header's disk line (disk_usage): the total of `.kiln/`, the store's and the sessions' shares, and "Clean up…" for archived sessions' working copies.
import { useState } from "react";
import { formatBytes } from "../../lib/bytes";
import { useDiskRefresh, useDiskUsage } from "../../state/useDiskUsage";
import { CleanUpDialog } from "./CleanUpDialog";

export function DiskUsage() {
  const { disk, error, refetch } = useDiskUsage();
  useDiskRefresh(refetch);
  const [cleaning, setCleaning] = useState(false);

  const cleanUp = (
    <>
      <button type="button" className="btn btn-small" onClick={() => setCleaning(true)} data-testid="clean-up">
        Clean up…
      </button>
      {cleaning && <CleanUpDialog onClose={() => setCleaning(false)} />}
    </>
  );
  if (error && !disk) {
    return (
      <span
        className="disk-usage muted small"
        data-testid="disk-usage"
        data-error={error.code}
        title={`${error.code}: ${error.message}`}
      >
        Disk: unavailable {cleanUp}
      </span>
    );
  }
  if (!disk) return null;
  const total = disk.storeBytes + disk.sessionsBytes;
  const title = [
    `Checkpoints and base snapshots (store.git): ${formatBytes(disk.storeBytes)}`,
    `Sessions' working copies, attachments and caches: ${formatBytes(disk.sessionsBytes)}`,
    `Measured ${new Date(disk.measuredAt).toLocaleString()}`,
  ].join("\n");
  return (
    <span className="disk-usage small" data-testid="disk-usage" title={title}>
      <span className="muted">Disk: </span>
      <span data-testid="disk-total">{formatBytes(total)}</span>
      <span className="muted">
        {" "}
        (store <span data-testid="disk-store">{formatBytes(disk.storeBytes)}</span> · sessions{" "}
        {formatBytes(disk.sessionsBytes)})
      </span>{" "}
      {cleanUp}
    </span>
  );
}

// A dashboard row's disk use: the session directory's size ("1.2 GB on disk", its parts in the title), or that its working copy was removed.
import { formatBytes } from "../../lib/bytes";
import { useDiskUsage } from "../../state/useDiskUsage";

export function SessionDisk({ sessionId }: { sessionId: string }) {
  const { disk } = useDiskUsage();
  const usage = disk?.sessions.find((s) => s.sessionId === sessionId);
  if (!usage) return null;
  const copy = usage.workingCopyBytes;
  const total = (copy ?? 0) + usage.attachmentsBytes + usage.otherBytes;
  const parts = [
    copy === null
      ? "Working copy: removed (rebuilt from its checkpoint when used)"
      : `Working copy: ${formatBytes(copy)}`,
    `Attachments: ${formatBytes(usage.attachmentsBytes)}`,
    `Stat cache and the rest: ${formatBytes(usage.otherBytes)}`,
  ];
  return (
    <>
      <span className="dot" aria-hidden="true">
        ·
      </span>
      <span
        className="row-disk"
        data-testid="row-disk"
        data-removed={copy === null || undefined}
        title={parts.join("\n")}
      >
        {copy === null ? `Working copy removed · ${formatBytes(total)} on disk` : `${formatBytes(total)} on disk`}
      </span>
    </>
  );
}

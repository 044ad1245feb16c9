// Attachment chips (name, size, remove), chips of uploads in progress, and the refusals of files that were not attached.
import { formatBytes, type Refusal, type UploadItem } from "../../lib/attachments";
import { ErrorMessage } from "../../components/ErrorMessage";
import { Icon } from "../../components/Icon";

/** A chip: an attachment of the session, or a file held until the session exists. */
export interface ChipItem {
  id: string;
  name: string;
  size: number;
  kind?: string;
  /** A remove request is on its way. */
  removing?: boolean;
}

export interface AttachmentChipsProps {
  items: ChipItem[];
  uploads?: UploadItem[];
  onRemove: (id: string) => void;
  disabled?: boolean;
}

export function AttachmentChips({ items, uploads = [], onRemove, disabled = false }: AttachmentChipsProps) {
  if (items.length === 0 && uploads.length === 0) return null;
  return (
    <ul className="chips attachment-chips" aria-label="Attachments" data-testid="attachments">
      {items.map((a) => (
        <li
          key={a.id}
          className="chip attachment-chip"
          data-testid="attachment-chip"
          data-attachment-id={a.id}
          data-kind={a.kind}
        >
          <Icon name={a.kind === "image" ? "image" : "file"} />
          <span className="attachment-name" title={a.name}>
            {a.name}
          </span>
          <span className="attachment-size muted">{formatBytes(a.size)}</span>
          <button
            type="button"
            className="chip-remove"
            onClick={() => onRemove(a.id)}
            disabled={disabled || a.removing}
            aria-label={`Remove ${a.name}`}
            title={`Remove ${a.name}`}
            data-testid="remove-attachment"
          >
            <Icon name="cross" size={12} />
          </button>
        </li>
      ))}
      {uploads.map((u) => (
        <li
          key={u.key}
          className="chip attachment-chip attachment-uploading"
          data-testid="attachment-uploading"
          aria-busy="true"
        >
          <span className="spinner" aria-hidden="true" />
          <span className="attachment-name" title={u.name}>
            {u.name}
          </span>
          <span className="attachment-size muted">Uploading {formatBytes(u.size)}…</span>
        </li>
      ))}
    </ul>
  );
}

/** One inline error per refused file: the file's name, the message and the code. */
export function AttachmentRefusals({ refusals }: { refusals: Refusal[] }) {
  if (refusals.length === 0) return null;
  return (
    <div className="attachment-refusals" data-testid="attachment-refusals">
      {refusals.map((r) => (
        <ErrorMessage key={r.key} error={r.error} subject={r.name} testId="attachment-error" />
      ))}
    </div>
  );
}

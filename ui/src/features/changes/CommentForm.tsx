// The box to write (or rewrite) a review comment on lines of a file: Save (or Ctrl/⌘+Enter), Cancel (or Escape).
import { useId, useState } from "react";

export interface CommentFormProps {
  /** What it is on, e.g. "lines 2–5". */
  label: string;
  initial?: string;
  saving: boolean;
  saveLabel?: string;
  onSave: (body: string) => void;
  onCancel: () => void;
  autoFocus?: boolean;
}

export function CommentForm({
  label,
  initial = "",
  saving,
  saveLabel = "Comment",
  onSave,
  onCancel,
  autoFocus,
}: CommentFormProps) {
  const id = useId();
  const [body, setBody] = useState(initial);
  const empty = body.trim() === "";
  const save = () => {
    if (!empty && !saving) onSave(body.trim());
  };
  return (
    <form
      className="comment-form"
      data-testid="comment-form"
      onSubmit={(e) => {
        e.preventDefault();
        save();
      }}
    >
      <label htmlFor={id} className="muted small">
        Comment on {label}
      </label>
      <textarea
        id={id}
        className="input comment-input"
        data-testid="comment-input"
        rows={3}
        value={body}
        // biome-ignore lint/a11y/noAutofocus: on purpose, the operator just picked the lines to comment on
        autoFocus={autoFocus}
        placeholder="What should the agent change here?"
        onChange={(e) => setBody(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
            e.preventDefault();
            save();
          } else if (e.key === "Escape") {
            e.preventDefault();
            onCancel();
          }
        }}
      />
      <div className="comment-actions">
        <button
          type="submit"
          className="btn btn-small btn-primary"
          disabled={empty || saving}
          data-testid="comment-save"
        >
          {saving ? "Saving…" : saveLabel}
        </button>
        <button type="button" className="btn btn-small" onClick={onCancel} data-testid="comment-cancel">
          Cancel
        </button>
      </div>
    </form>
  );
}

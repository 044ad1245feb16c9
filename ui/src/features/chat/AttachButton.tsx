// The "Attach" button: opens a hidden multi-file input limited to the types Kiln accepts.
import { useRef } from "react";
import { ATTACHMENT_ACCEPT } from "../../lib/attachments";
import { Icon } from "../../components/Icon";

export function AttachButton({ onFiles, disabled = false }: { onFiles: (files: File[]) => void; disabled?: boolean }) {
  const inputRef = useRef<HTMLInputElement>(null);
  return (
    <>
      <button
        type="button"
        className="btn btn-small attach-button"
        onClick={() => inputRef.current?.click()}
        disabled={disabled}
        data-testid="attach"
        title="Attach files: images, PDF, Markdown, text, JSON or CSV, up to 5 MB each (or paste or drop them here)"
      >
        <Icon name="clip" /> Attach
      </button>
      <input
        ref={inputRef}
        type="file"
        multiple
        accept={ATTACHMENT_ACCEPT}
        hidden
        tabIndex={-1}
        aria-hidden="true"
        data-testid="attach-input"
        onChange={(e) => {
          const files = Array.from(e.target.files ?? []);
          // Cleared so choosing the same file again fires a change.
          e.target.value = "";
          if (files.length > 0) onFiles(files);
        }}
      />
    </>
  );
}

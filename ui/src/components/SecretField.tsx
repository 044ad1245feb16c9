// A write-only secret (an API key, an access token): a password input, and the stored one's fingerprint with Clear; never the secret itself.

/** A secret as typed: a new value, or a request to clear the stored one. */
export interface SecretInput {
  value: string;
  clear: boolean;
}

export interface SecretFieldProps {
  /** The input's id and data-testid. */
  id: string;
  label: string;
  /** What the secret is called in sentences ("key", "token"). */
  noun: string;
  input: SecretInput;
  onChange: (input: SecretInput) => void;
  /** The stored secret's fingerprint, or null when none is stored. */
  fingerprint: string | null;
  fingerprintTestId: string;
  clearTestId: string;
}

export function SecretField({
  id,
  label,
  noun,
  input,
  onChange,
  fingerprint,
  fingerprintTestId,
  clearTestId,
}: SecretFieldProps) {
  return (
    <>
      <label className="field-label" htmlFor={id}>
        {label}
      </label>
      <input
        id={id}
        className="input"
        type="password"
        value={input.value}
        onChange={(e) => onChange({ value: e.target.value, clear: false })}
        placeholder={fingerprint ? `type a new ${noun} to replace the stored one` : "not set"}
        autoComplete="new-password"
        spellCheck={false}
        data-testid={id}
      />
      <div className="key-status">
        {fingerprint && !input.clear && (
          <>
            <span className="muted small" data-testid={fingerprintTestId}>
              stored: <code>{fingerprint}</code>
            </span>
            <button
              type="button"
              className="btn btn-small btn-danger-ghost"
              onClick={() => onChange({ value: "", clear: true })}
              data-testid={clearTestId}
            >
              Clear
            </button>
          </>
        )}
        {input.clear && (
          <>
            <span className="warn-text small">The stored {noun} is removed when you save.</span>
            <button type="button" className="btn btn-small" onClick={() => onChange({ value: "", clear: false })}>
              Keep it
            </button>
          </>
        )}
      </div>
    </>
  );
}

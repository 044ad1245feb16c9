// Inline error display: the engine's message in words (its `backticked` names as code), the error code behind a details toggle.
import type { KilnError } from "../api/backend";
import { errorWords } from "../lib/errorWords";
import { Icon } from "./Icon";
import { InlineCode } from "./InlineCode";

export interface ErrorMessageProps {
  error: KilnError;
  onRetry?: () => void;
  /** What the error is about (e.g. a file name), shown before the message. */
  subject?: string;
  testId?: string;
}

/** The code and what it means, folded away: people read the message; the code is for reports and searches. */
export function ErrorCodeDetails({ codes }: { codes: string[] }) {
  if (codes.length === 0) return null;
  return (
    <details className="error-details" data-testid="error-details">
      <summary>details</summary>
      {codes.map((code) => (
        <span key={code} className="error-details-line">
          <code className="error-code">{code}</code> {errorWords(code)}
        </span>
      ))}
    </details>
  );
}

export function ErrorMessage({ error, onRetry, subject, testId = "error" }: ErrorMessageProps) {
  const message = error.message?.trim() || errorWords(error.code);
  return (
    <div className="error" role="alert" data-testid={testId} data-code={error.code}>
      <Icon name="alert" className="error-icon" />
      <div className="error-text">
        {subject && <strong className="error-subject">{subject}</strong>}
        <span className="error-message">
          <InlineCode text={message} />
        </span>
        <ErrorCodeDetails codes={error.code ? [error.code] : []} />
      </div>
      {onRetry && (
        <button type="button" className="btn btn-small" onClick={onRetry}>
          Retry
        </button>
      )}
    </div>
  );
}

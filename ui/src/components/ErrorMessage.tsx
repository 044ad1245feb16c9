// Inline error display: the engine's message and its error code, optionally naming what it is about.
import type { KilnError } from "../api/backend";
import { Icon } from "./Icon";

export interface ErrorMessageProps {
  error: KilnError;
  onRetry?: () => void;
  /** What the error is about (e.g. a file name), shown before the message. */
  subject?: string;
  testId?: string;
}

export function ErrorMessage({ error, onRetry, subject, testId = "error" }: ErrorMessageProps) {
  return (
    <div className="error" role="alert" data-testid={testId}>
      <Icon name="alert" className="error-icon" />
      <div className="error-text">
        {subject && <strong className="error-subject">{subject}</strong>}
        <span className="error-message">{error.message}</span>
        <code className="error-code">{error.code}</code>
      </div>
      {onRetry && (
        <button type="button" className="btn btn-small" onClick={onRetry}>
          Retry
        </button>
      )}
    </div>
  );
}

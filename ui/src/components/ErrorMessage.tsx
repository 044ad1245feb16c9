// Inline error display: the engine's message and its error code.
import type { KilnError } from "../api/backend";
import { Icon } from "./Icon";

export function ErrorMessage({ error, onRetry }: { error: KilnError; onRetry?: () => void }) {
  return (
    <div className="error" role="alert" data-testid="error">
      <Icon name="alert" className="error-icon" />
      <div className="error-text">
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

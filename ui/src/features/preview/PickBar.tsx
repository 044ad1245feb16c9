// The line under the preview's toolbar while picking: what to do in the frame and how to cancel, then the capture, or why it failed.
import type { PickHandle } from "./usePick";
import { ErrorMessage } from "../../components/ErrorMessage";

export function PickBar({ pick }: { pick: PickHandle }) {
  if (!pick.mode && !pick.capturing && !pick.error) return null;
  return (
    <div className="preview-pick-bar" role="status" data-testid="pick-bar" data-mode={pick.mode ?? undefined}>
      {pick.mode === "element" && <span>Picking: click an element of the page. Esc cancels.</span>}
      {pick.mode === "region" && <span>Capturing a region: drag a rectangle over the page. Esc cancels.</span>}
      {!pick.mode && pick.capturing && (
        <span>
          <span className="spinner" aria-hidden="true" /> Capturing what you picked…
        </span>
      )}
      {!pick.mode && !pick.capturing && pick.error && <ErrorMessage error={pick.error} testId="pick-error" />}
      <span className="preview-toolbar-gap" />
      {pick.mode && (
        <button type="button" className="btn btn-small" onClick={pick.cancel} data-testid="pick-cancel">
          Cancel
        </button>
      )}
    </div>
  );
}

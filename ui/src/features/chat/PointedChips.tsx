// Chips of what the operator pointed at in the preview: a thumbnail of the screenshot and the element's selector (or "Region"), with remove while it waits in the composer.
import type { ScreenshotKind } from "../../api/types";
import { pointedLabel } from "../../lib/pointed";
import { useScreenshotUrl } from "../../state/useScreenshot";
import { Icon } from "../../components/Icon";

export interface PointedChipItem {
  screenshotId: number;
  kind: ScreenshotKind;
  pagePath: string;
  selector?: string | null;
  width?: number;
  height?: number;
}

function Thumbnail({ sessionId, screenshotId }: { sessionId: string; screenshotId: number }) {
  const url = useScreenshotUrl(sessionId, screenshotId);
  return url ? (
    <img className="pointed-thumb" src={url} alt="" data-testid="pointed-thumb" />
  ) : (
    <span className="pointed-thumb pointed-thumb-empty" aria-hidden="true" />
  );
}

export interface PointedChipsProps {
  sessionId: string;
  items: PointedChipItem[];
  /** Absent in the transcript, where the chips are what was sent. */
  onRemove?: (screenshotId: number) => void;
  disabled?: boolean;
}

export function PointedChips({ sessionId, items, onRemove, disabled = false }: PointedChipsProps) {
  if (items.length === 0) return null;
  return (
    <ul className="chips pointed-chips" aria-label="Pointed at in the preview" data-testid="pointed-chips">
      {items.map((item) => {
        const label = pointedLabel(item.kind, item.selector, item.width, item.height);
        return (
          <li
            key={item.screenshotId}
            className="chip pointed-chip"
            data-testid="pointed-chip"
            data-kind={item.kind}
            title={`${label} on ${item.pagePath}`}
          >
            <Thumbnail sessionId={sessionId} screenshotId={item.screenshotId} />
            <code className="pointed-label">{label}</code>
            {onRemove && (
              <button
                type="button"
                className="chip-remove"
                onClick={() => onRemove(item.screenshotId)}
                disabled={disabled}
                aria-label={`Remove ${label}`}
                title={`Remove ${label}`}
                data-testid="remove-pointed"
              >
                <Icon name="cross" size={12} />
              </button>
            )}
          </li>
        );
      })}
    </ul>
  );
}

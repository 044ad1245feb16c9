// The live transcript (the chat): entries folded into compact rows, following the end while the user is there, virtualized when long, with the agent's live text at the bottom.
import { useVirtualizer } from "@tanstack/react-virtual";
import { type ReactNode, useMemo } from "react";
import type { PermissionCard as PermissionCardView, TranscriptEntry } from "../../api/types";
import { Icon } from "../../components/Icon";
import { type LiveView, liveShows } from "../../lib/live";
import { foldTranscript, type Row, rowStartsRoleGroup } from "../../lib/transcript";
import { LiveActivity } from "./LiveActivity";
import { PermissionCard } from "./PermissionCard";
import { RunningOutputContext, runningRowKey } from "./runningOutput";
import { RowView } from "./TranscriptRow";
import { type Follow, useFollow } from "./useFollow";

/** Below this many rows a plain list is simpler and cheap enough. */
export const VIRTUALIZE_AT = 200;

/** A row's height before it is measured (a one-line message or tool row). */
const ROW_ESTIMATE_PX = 48;

export interface TranscriptViewProps {
  entries: TranscriptEntry[];
  /** Drawn under an entry (e.g. its checkpoint's restore button); null for none. */
  footerOf?: (entry: TranscriptEntry) => ReactNode;
  /** The session's live activity (streaming text, the provider's status line), when there is some. */
  live?: LiveView | null;
  /** The agent's permission requests waiting for an answer: cards at the end of the chat. */
  permissions?: PermissionCardView[];
}

const NO_CARDS: PermissionCardView[] = [];

export function TranscriptView({ entries, footerOf, live, permissions = NO_CARDS }: TranscriptViewProps) {
  const rows = useMemo(() => foldTranscript(entries), [entries]);
  const shown = liveShows(live) ? live : null;
  const runningKey = useMemo(() => runningRowKey(rows), [rows]);
  const output = live?.output ?? null;
  const running = useMemo(() => ({ rowKey: runningKey, output }), [runningKey, output]);
  const last = entries[entries.length - 1];
  // A new card is activity too: followed into view, or "New activity" when the reader scrolled up.
  const cards = permissions.map((c) => c.id).join(",");
  const changed = `${entries.length}:${last?.id ?? 0}:${shown?.text?.length ?? 0}:${output?.length ?? 0}:${shown?.status?.message ?? ""}:${shown?.status?.attempt ?? ""}:${cards}`;
  const sessionId = entries[0]?.sessionId ?? live?.sessionId ?? null;
  const follow = useFollow(changed, sessionId);
  const list =
    rows.length >= VIRTUALIZE_AT ? (
      <VirtualRows rows={rows} follow={follow} footerOf={footerOf} />
    ) : (
      <PlainRows rows={rows} footerOf={footerOf} />
    );
  return (
    <div
      className="transcript"
      data-testid="transcript"
      ref={follow.scrollRef}
      onScroll={follow.onScroll}
      tabIndex={0}
      role="log"
      aria-label="Transcript"
    >
      <div className="transcript-content" ref={follow.contentRef}>
        <RunningOutputContext.Provider value={running}>{list}</RunningOutputContext.Provider>
        {shown && <LiveActivity live={shown} />}
        {sessionId && permissions.map((card) => <PermissionCard key={card.id} sessionId={sessionId} card={card} />)}
      </div>
      {follow.unseen && (
        <div className="new-activity-anchor">
          <button type="button" className="new-activity" data-testid="new-activity" onClick={follow.toBottom}>
            New activity <Icon name="down" size={13} />
          </button>
        </div>
      )}
    </div>
  );
}

function Footers({ row, footerOf }: { row: Row; footerOf?: (entry: TranscriptEntry) => ReactNode }) {
  if (!footerOf) return null;
  return (
    <>
      {row.entries.map((e) => (
        <FooterOf key={e.id} entry={e} footerOf={footerOf} />
      ))}
    </>
  );
}

function FooterOf({ entry, footerOf }: { entry: TranscriptEntry; footerOf: (entry: TranscriptEntry) => ReactNode }) {
  return <>{footerOf(entry)}</>;
}

function itemClass(row: Row): string {
  const kind =
    row.type === "user" || row.type === "agent" || row.type === "tool"
      ? row.type
      : row.type === "handoff"
        ? "handoff"
        : "system";
  return `entry-item entry-item-${kind} row-${row.type}`;
}

function PlainRows({ rows, footerOf }: { rows: Row[]; footerOf?: (entry: TranscriptEntry) => ReactNode }) {
  return (
    <ol className="entries">
      {rows.map((row, i) => (
        <li key={row.key} className={itemClass(row)}>
          <RowView row={row} roleHead={rowStartsRoleGroup(rows, i)} />
          <Footers row={row} footerOf={footerOf} />
        </li>
      ))}
    </ol>
  );
}

function VirtualRows({
  rows,
  follow,
  footerOf,
}: {
  rows: Row[];
  follow: Follow;
  footerOf?: (entry: TranscriptEntry) => ReactNode;
}) {
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => follow.scrollRef.current,
    // Read once, at the first render; the virtualizer writes it to the chat when it attaches, after the
    // follow's own stick (the chat's ref is set after this list's effects run). Opening a long transcript
    // at its end, 0 there would leave it at its top: the estimated end is where following starts (the
    // browser clamps it to the real end).
    initialOffset: () => (follow.following() ? rows.length * ROW_ESTIMATE_PX : 0),
    estimateSize: () => ROW_ESTIMATE_PX,
    // The chat's size until the virtualizer has observed it: with none (0) it draws no row at all, and
    // opening a 10,000-entry transcript showed an empty chat for half a second after it had arrived.
    initialRect: { width: 0, height: window.innerHeight },
    overscan: 8,
    getItemKey: (index) => rows[index].key,
  });
  return (
    <ol className="entries entries-virtual" style={{ height: virtualizer.getTotalSize() }}>
      {virtualizer.getVirtualItems().map((item) => {
        const row = rows[item.index];
        return (
          <li
            key={item.key}
            data-index={item.index}
            ref={virtualizer.measureElement}
            className={`entry-virtual ${itemClass(row)}`}
            style={{ transform: `translateY(${item.start}px)` }}
          >
            <RowView row={row} roleHead={rowStartsRoleGroup(rows, item.index)} />
            <Footers row={row} footerOf={footerOf} />
          </li>
        );
      })}
    </ol>
  );
}

// The live transcript (the chat): a scrolling list that follows new entries, virtualized when it gets long.
import { useVirtualizer } from "@tanstack/react-virtual";
import { type ReactNode, type RefObject, useLayoutEffect, useRef } from "react";
import type { TranscriptEntry } from "../../api/types";
import { EntryView, startsRoleGroup } from "./TranscriptEntry";

/** Below this many entries a plain list is simpler and cheap enough. */
export const VIRTUALIZE_AT = 200;
const NEAR_BOTTOM_PX = 48;

export interface TranscriptViewProps {
  entries: TranscriptEntry[];
  /** Drawn under an entry (e.g. its checkpoint's restore button); null for none. */
  footerOf?: (entry: TranscriptEntry) => ReactNode;
}

export function TranscriptView({ entries, footerOf }: TranscriptViewProps) {
  return entries.length >= VIRTUALIZE_AT ? <VirtualTranscript entries={entries} footerOf={footerOf} /> : <PlainTranscript entries={entries} footerOf={footerOf} />;
}

/** Tracks whether the user is at the bottom, so new entries scroll into view only then. */
function useFollow() {
  const scrollRef = useRef<HTMLDivElement>(null);
  const followRef = useRef(true);
  const onScroll = () => {
    const el = scrollRef.current;
    if (el) followRef.current = el.scrollHeight - el.scrollTop - el.clientHeight < NEAR_BOTTOM_PX;
  };
  return { scrollRef, followRef, onScroll };
}

function Scroller({ scrollRef, onScroll, children }: { scrollRef: RefObject<HTMLDivElement | null>; onScroll: () => void; children: ReactNode }) {
  return (
    <div className="transcript" data-testid="transcript" ref={scrollRef} onScroll={onScroll} tabIndex={0} role="log" aria-label="Transcript">
      {children}
    </div>
  );
}

function PlainTranscript({ entries, footerOf }: TranscriptViewProps) {
  const { scrollRef, followRef, onScroll } = useFollow();
  useLayoutEffect(() => {
    const el = scrollRef.current;
    if (el && followRef.current) el.scrollTop = el.scrollHeight;
  }, [entries.length, scrollRef, followRef]);
  return (
    <Scroller scrollRef={scrollRef} onScroll={onScroll}>
      <ol className="entries">
        {entries.map((entry, i) => (
          <li key={entry.id} className={`entry-item entry-item-${entry.kind}`}>
            <EntryView entry={entry} roleHead={startsRoleGroup(entries, i)} />
            {footerOf?.(entry)}
          </li>
        ))}
      </ol>
    </Scroller>
  );
}

function VirtualTranscript({ entries, footerOf }: TranscriptViewProps) {
  const { scrollRef, followRef, onScroll } = useFollow();
  const virtualizer = useVirtualizer({
    count: entries.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => 120,
    overscan: 6,
    getItemKey: (index) => entries[index].id,
  });
  useLayoutEffect(() => {
    if (followRef.current && entries.length > 0) virtualizer.scrollToIndex(entries.length - 1, { align: "end" });
  }, [entries.length, virtualizer, followRef]);
  return (
    <Scroller scrollRef={scrollRef} onScroll={onScroll}>
      <ol className="entries entries-virtual" style={{ height: virtualizer.getTotalSize() }}>
        {virtualizer.getVirtualItems().map((item) => (
          <li
            key={item.key}
            data-index={item.index}
            ref={virtualizer.measureElement}
            className={`entry-virtual entry-item entry-item-${entries[item.index].kind}`}
            style={{ transform: `translateY(${item.start}px)` }}
          >
            <EntryView entry={entries[item.index]} roleHead={startsRoleGroup(entries, item.index)} />
            {footerOf?.(entries[item.index])}
          </li>
        ))}
      </ol>
    </Scroller>
  );
}

// Keeps the chat at the bottom while the user is there, and says "new activity" when they scrolled up and something arrived.
import { type RefObject, useCallback, useEffect, useLayoutEffect, useRef, useState } from "react";
import { onSent } from "../../lib/sent";

/** Within this many pixels of the end counts as "at the bottom". */
export const NEAR_BOTTOM_PX = 48;

export interface Follow {
  scrollRef: RefObject<HTMLDivElement | null>;
  contentRef: RefObject<HTMLDivElement | null>;
  onScroll: () => void;
  /** Something new arrived while the user was scrolled up. */
  unseen: boolean;
  toBottom: () => void;
  /** Whether the chat is following its end (the reader has not scrolled up). */
  following: () => boolean;
}

/**
 * `changed` changes whenever the content does (a new entry, more streamed text). A message sent from this
 * window for `sessionId` (lib/sent.ts) always brings the end into view; one sent elsewhere does not.
 */
export function useFollow(changed: string, sessionId: string | null): Follow {
  const scrollRef = useRef<HTMLDivElement>(null);
  const contentRef = useRef<HTMLDivElement>(null);
  const atBottom = useRef(true);
  const lastTop = useRef(0);
  const [unseen, setUnseen] = useState(false);

  const stick = useCallback(() => {
    const el = scrollRef.current;
    if (!el) return;
    el.scrollTop = el.scrollHeight;
    lastTop.current = el.scrollTop;
  }, []);

  const toBottom = useCallback(() => {
    atBottom.current = true;
    setUnseen(false);
    stick();
  }, [stick]);

  const onScroll = useCallback(() => {
    const el = scrollRef.current;
    if (!el) return;
    const top = el.scrollTop;
    const near = el.scrollHeight - top - el.clientHeight < NEAR_BOTTOM_PX;
    if (near) {
      atBottom.current = true;
      setUnseen(false);
    } else if (top < lastTop.current) {
      // Only moving up leaves the end. A scroll event can arrive after the content grew past a position Kiln
      // itself set (the scroll is dispatched a frame later): that is not the reader leaving, so catch up.
      atBottom.current = false;
    } else if (atBottom.current) {
      stick();
    }
    lastTop.current = el.scrollTop;
  }, [stick]);

  useLayoutEffect(() => {
    if (atBottom.current) stick();
    else setUnseen(true);
  }, [changed, stick]);

  useEffect(() => onSent((id) => id === sessionId && toBottom()), [sessionId, toBottom]);

  // Rows grow after they render (markdown, measured virtual rows, a streaming bubble): stay at the end while following.
  useLayoutEffect(() => {
    const content = contentRef.current;
    if (!content || typeof ResizeObserver === "undefined") return;
    const observer = new ResizeObserver(() => {
      if (atBottom.current) stick();
    });
    observer.observe(content);
    return () => observer.disconnect();
  }, [stick]);

  const following = useCallback(() => atBottom.current, []);

  return { scrollRef, contentRef, onScroll, unseen, toBottom, following };
}

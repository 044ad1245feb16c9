// Keystrokes into a terminal: one write at a time, in order; what is typed while a write is on its way goes together in the next one, and no write is over the engine's 64 KiB.

/** The engine's limit on one write_terminal's data, in UTF-8 bytes. */
export const MAX_INPUT_BYTES = 64 * 1024;

/** UTF-8 bytes of one code point. */
function utf8Length(codePoint: number): number {
  if (codePoint < 0x80) return 1;
  if (codePoint < 0x800) return 2;
  if (codePoint < 0x10000) return 3;
  return 4;
}

/** `text` cut in pieces of at most `maxBytes` UTF-8 bytes each, never inside a character. */
export function splitUtf8(text: string, maxBytes = MAX_INPUT_BYTES): string[] {
  const pieces: string[] = [];
  let start = 0;
  let bytes = 0;
  let i = 0;
  while (i < text.length) {
    const codePoint = text.codePointAt(i) as number;
    const units = codePoint > 0xffff ? 2 : 1;
    const size = utf8Length(codePoint);
    if (bytes + size > maxBytes && i > start) {
      pieces.push(text.slice(start, i));
      start = i;
      bytes = 0;
    }
    bytes += size;
    i += units;
  }
  if (i > start) pieces.push(text.slice(start, i));
  return pieces;
}

export interface InputBatcher {
  /** Queues what xterm's onData gave; sent at once when no write is on its way. */
  push(data: string): void;
  /** Whether a write is on its way or input waits. */
  readonly busy: boolean;
}

/**
 * Sends input through `send` in order, one call at a time, merging what queued meanwhile.
 * A failed write is reported to `onError` and the rest still goes (the next call may succeed, and
 * the engine refuses it by itself once the terminal exited).
 */
export function createInputBatcher(
  send: (data: string) => Promise<unknown>,
  onError: (error: unknown) => void = () => {},
  maxBytes = MAX_INPUT_BYTES,
): InputBatcher {
  let pending = "";
  let inFlight = false;

  const next = () => {
    if (inFlight || pending === "") return;
    const [first] = splitUtf8(pending, maxBytes);
    pending = pending.slice(first.length);
    inFlight = true;
    send(first)
      .catch(onError)
      .finally(() => {
        inFlight = false;
        next();
      });
  };

  return {
    push(data: string) {
      if (data === "") return;
      pending += data;
      next();
    },
    get busy() {
      return inFlight || pending !== "";
    },
  };
}

// "The operator sent a message from this window": the chat jumps to its end then (a message sent elsewhere does not pull the reader away).
type Listener = (sessionId: string) => void;

const listeners = new Set<Listener>();

export function noteSent(sessionId: string): void {
  for (const listener of listeners) listener(sessionId);
}

/** Subscribes; returns the unsubscribe. */
export function onSent(listener: Listener): () => void {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}

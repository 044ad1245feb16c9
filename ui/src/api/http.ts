// Backend over HTTP for `kiln serve`: POST /api/<command> and server-sent events at /api/events.
import { type ArgsOf, type Backend, type Command, KilnError, type ResultOf } from "./backend";
import type { KilnEvent } from "./types";

export interface HttpBackendOptions {
  /** Prefix before /api (default: same origin). */
  baseUrl?: string;
  fetch?: typeof fetch;
  EventSource?: typeof EventSource;
  /** Delay before re-opening an event stream the browser gave up on. */
  reconnectMs?: number;
}

const MAX_DETAIL = 200;

function errorFromBody(status: number, statusText: string, text: string): KilnError {
  try {
    const body: unknown = JSON.parse(text);
    const error = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
    if (error && typeof error.code === "string") {
      const message = typeof error.message === "string" ? error.message : error.code;
      return new KilnError(error.code as KilnError["code"], message);
    }
  } catch {
    // Not JSON: fall through to a generic error.
  }
  const detail = text.trim().slice(0, MAX_DETAIL);
  const head = `HTTP ${status}${statusText ? ` ${statusText}` : ""}`;
  return new KilnError("INTERNAL", detail ? `${head}: ${detail}` : head);
}

export function createHttpBackend(options: HttpBackendOptions = {}): Backend {
  const base = (options.baseUrl ?? "").replace(/\/+$/, "");
  const doFetch: typeof fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const reconnectMs = options.reconnectMs ?? 3000;

  async function call<C extends Command>(command: C, args: ArgsOf<C>): Promise<ResultOf<C>> {
    let text: string;
    let response: Response;
    try {
      response = await doFetch(`${base}/api/${command}`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-kiln": "1" },
        body: JSON.stringify(args ?? {}),
      });
      text = await response.text();
    } catch (e) {
      const reason = e instanceof Error ? e.message : String(e);
      throw new KilnError("NETWORK", `Could not reach the Kiln engine (${reason}).`);
    }
    if (!response.ok) throw errorFromBody(response.status, response.statusText, text);
    if (text.trim() === "") return null as ResultOf<C>;
    try {
      return JSON.parse(text) as ResultOf<C>;
    } catch {
      throw new KilnError("INTERNAL", `The engine sent a response that is not JSON for ${command}.`);
    }
  }

  function subscribe(onEvent: (event: KilnEvent) => void): () => void {
    const Source = options.EventSource ?? globalThis.EventSource;
    let source: EventSource | null = null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    let lastId = 0;

    const open = (reopened: boolean) => {
      const es = new Source(`${base}/api/events`);
      source = es;
      es.onmessage = (message: MessageEvent<string>) => {
        let event: KilnEvent;
        try {
          event = JSON.parse(message.data) as KilnEvent;
        } catch {
          console.warn("kiln: ignoring an event that is not JSON", message.data);
          return;
        }
        if (typeof event.id === "number") lastId = Math.max(lastId, event.id);
        onEvent(event);
      };
      if (reopened) {
        // A fresh EventSource has no Last-Event-ID, so events may have been missed: refetch.
        es.onopen = () => onEvent({ id: lastId, at: new Date().toISOString(), body: { type: "resync" } });
      }
      es.onerror = () => {
        // The browser reconnects by itself (sending Last-Event-ID) unless the stream is CLOSED.
        if (es.readyState === 2 && !stopped) {
          es.close();
          timer = setTimeout(() => open(true), reconnectMs);
        }
      };
    };
    open(false);

    return () => {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      source?.close();
    };
  }

  return {
    kind: "http",
    call,
    subscribe,
    pickFolder: async () => null,
  };
}

// Backend over HTTP for `kiln serve`: POST /api/<command>, /api/connect and /api/disconnect (session cookie), and server-sent events at /api/events.
import { type ArgsOf, type Backend, type Command, type ConnectResult, KilnError, type ResultOf } from "./backend";
import type { KilnEvent, ServeMode } from "./types";

export interface HttpBackendOptions {
  /** Prefix before /api (default: same origin). */
  baseUrl?: string;
  fetch?: typeof fetch;
  EventSource?: typeof EventSource;
  /** Delay before re-opening an event stream the browser gave up on. */
  reconnectMs?: number;
}

const MAX_DETAIL = 200;

/** Retry-After as seconds from now: delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

function modeOf(value: unknown): ServeMode | undefined {
  return value === "loopback" || value === "self-hosted" ? value : undefined;
}

function errorFromBody(response: Response, text: string): KilnError {
  const retryAfterSeconds = parseRetryAfter(response.headers.get("retry-after"));
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown }; mode?: unknown } | null;
    const error = body?.error;
    if (error && typeof error.code === "string") {
      const message = typeof error.message === "string" ? error.message : error.code;
      return new KilnError(error.code as KilnError["code"], message, { retryAfterSeconds, mode: modeOf(body?.mode) });
    }
  } catch {
    // Not JSON: fall through to a generic error.
  }
  const detail = text.trim().slice(0, MAX_DETAIL);
  const head = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}`;
  return new KilnError("INTERNAL", detail ? `${head}: ${detail}` : head);
}

export function createHttpBackend(options: HttpBackendOptions = {}): Backend {
  const base = (options.baseUrl ?? "").replace(/\/+$/, "");
  const doFetch: typeof fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const reconnectMs = options.reconnectMs ?? 3000;

  /** POSTs JSON to /api/<path> (or GETs it when body is undefined) with the session cookie; the parsed answer (null when empty). */
  async function request(path: string, body?: unknown): Promise<unknown> {
    // same-origin credentials: the browser session's cookie goes with every request.
    const init: RequestInit =
      body === undefined
        ? { method: "GET", credentials: "same-origin", cache: "no-store" }
        : {
            method: "POST",
            headers: { "content-type": "application/json", "x-kiln": "1" },
            credentials: "same-origin",
            body: JSON.stringify(body),
          };
    let text: string;
    let response: Response;
    try {
      response = await doFetch(`${base}/api/${path}`, init);
      text = await response.text();
    } catch (e) {
      const reason = e instanceof Error ? e.message : String(e);
      throw new KilnError("NETWORK", `Could not reach the Kiln engine (${reason}).`);
    }
    if (!response.ok) throw errorFromBody(response, text);
    if (text.trim() === "") return null;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new KilnError("INTERNAL", `The engine sent a response that is not JSON for ${path}.`);
    }
  }

  async function call<C extends Command>(command: C, args: ArgsOf<C>): Promise<ResultOf<C>> {
    // GET /api/state is get_state; unlike POST /api/get_state, its NOT_CONNECTED answer names the mode.
    if (command === "get_state") return (await request("state")) as ResultOf<C>;
    return (await request(command, args ?? {})) as ResultOf<C>;
  }

  async function connect(token?: string): Promise<ConnectResult> {
    return (await request("connect", token ? { token } : {})) as ConnectResult;
  }

  async function disconnect(): Promise<void> {
    await request("disconnect", {});
  }

  function subscribe(
    onEvent: (event: KilnEvent) => void,
    onReachable?: (reachable: boolean) => void,
    since?: number,
  ): () => void {
    const Source = options.EventSource ?? globalThis.EventSource;
    let source: EventSource | null = null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    let lastId = 0;

    const open = (reopened: boolean) => {
      // A reopened stream may meet a restarted server numbering afresh: it refetches (below)
      // instead of resuming. The browser's own reconnects send Last-Event-ID, which wins.
      const from = !reopened && since !== undefined ? `?since=${since}` : "";
      const es = new Source(`${base}/api/events${from}`);
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
      es.onopen = () => {
        onReachable?.(true);
        // A fresh EventSource has no Last-Event-ID, so events may have been missed: refetch.
        if (reopened) onEvent({ id: lastId, at: new Date().toISOString(), body: { type: "resync" } });
      };
      es.onerror = () => {
        if (!stopped) onReachable?.(false);
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
    connect,
    disconnect,
    subscribe,
    pickFolder: async () => null,
  };
}

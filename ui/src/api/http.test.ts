// Tests for the HTTP backend: request shape and cookie, connect/disconnect, error bodies → KilnError, network failures, events.
import { afterEach, describe, expect, it, vi } from "vitest";
import { KilnError } from "./backend";
import { createHttpBackend, parseRetryAfter } from "./http";

function jsonResponse(status: number, body: unknown): Response {
  return new Response(body === undefined ? "" : JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json" },
  });
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("HTTP backend call", () => {
  it("POSTs JSON args to /api/<command> with the kiln headers", async () => {
    const session = { id: "s1" };
    const fetchMock = vi.fn(async () => jsonResponse(200, session));
    vi.stubGlobal("fetch", fetchMock);

    const result = await createHttpBackend().call("archive_session", { sessionId: "s1", stop: true });

    expect(result).toEqual(session);
    expect(fetchMock).toHaveBeenCalledTimes(1);
    const [url, init] = fetchMock.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe("/api/archive_session");
    expect(init.method).toBe("POST");
    expect(init.headers).toEqual({ "content-type": "application/json", "x-kiln": "1" });
    expect(init.credentials).toBe("same-origin");
    expect(JSON.parse(init.body as string)).toEqual({ sessionId: "s1", stop: true });
  });

  it("sends {} for commands without arguments", async () => {
    const fetchMock = vi.fn(async () => jsonResponse(200, { total: {}, byRole: [] }));
    vi.stubGlobal("fetch", fetchMock);
    await createHttpBackend().call("workspace_usage", {});
    const [, init] = fetchMock.mock.calls[0] as unknown as [string, RequestInit];
    expect(init.body).toBe("{}");
  });

  it("reads get_state from GET /api/state with the session cookie", async () => {
    const fetchMock = vi.fn(async () => jsonResponse(200, { version: "1", mode: "loopback", connected: false }));
    const state = await createHttpBackend({ fetch: fetchMock }).call("get_state", {});
    expect(state).toMatchObject({ connected: false });
    const [url, init] = fetchMock.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe("/api/state");
    expect(init.method).toBe("GET");
    expect(init.credentials).toBe("same-origin");
    expect(init.body).toBeUndefined();
  });

  it("turns a 401 from /api/state into NOT_CONNECTED carrying the server's mode", async () => {
    const body = { error: { code: "NOT_CONNECTED", message: "connect first" }, mode: "self-hosted" };
    const fetchMock = vi.fn(async () => jsonResponse(401, body));
    const error = (await createHttpBackend({ fetch: fetchMock })
      .call("get_state", {})
      .catch((e: unknown) => e)) as KilnError;
    expect(error).toBeInstanceOf(KilnError);
    expect(error.code).toBe("NOT_CONNECTED");
    expect(error.mode).toBe("self-hosted");
  });

  it("turns an error body into a KilnError with its code and message", async () => {
    vi.stubGlobal(
      "fetch",
      vi.fn(async () => jsonResponse(409, { error: { code: "SESSION_RUNNING", message: "Session s1 is running" } })),
    );
    const error = await createHttpBackend()
      .call("reject_session", { sessionId: "s1" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KilnError);
    expect(error).toMatchObject({ code: "SESSION_RUNNING", message: "Session s1 is running" });
  });

  it("reports a failed fetch as NETWORK", async () => {
    vi.stubGlobal(
      "fetch",
      vi.fn(async () => Promise.reject(new TypeError("Failed to fetch"))),
    );
    const error = await createHttpBackend()
      .call("get_state", {})
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KilnError);
    expect((error as KilnError).code).toBe("NETWORK");
    expect((error as KilnError).message).toContain("Failed to fetch");
  });

  it("reports a non-JSON error response as INTERNAL with the status", async () => {
    vi.stubGlobal(
      "fetch",
      vi.fn(async () => new Response("Bad Gateway", { status: 502, statusText: "Bad Gateway" })),
    );
    const error = (await createHttpBackend()
      .call("get_state", {})
      .catch((e: unknown) => e)) as KilnError;
    expect(error.code).toBe("INTERNAL");
    expect(error.message).toContain("502");
  });

  it("returns null for delete_session when the record was removed", async () => {
    vi.stubGlobal(
      "fetch",
      vi.fn(async () => new Response("null", { status: 200 })),
    );
    const result = await createHttpBackend().call("delete_session", { sessionId: "s1", keepTranscript: false });
    expect(result).toBeNull();
  });

  it("uses a base URL when given one", async () => {
    const fetchMock = vi.fn(async () => jsonResponse(200, []));
    await createHttpBackend({ baseUrl: "http://127.0.0.1:9000/", fetch: fetchMock }).call("list_sessions", {
      includeArchived: true,
    });
    expect((fetchMock.mock.calls[0] as unknown[])[0]).toBe("http://127.0.0.1:9000/api/list_sessions");
  });

  it("connects with a token, and without one, through POST /api/connect", async () => {
    const answer = { connected: true, mode: "self-hosted", expiresAt: "2026-01-01T12:00:00Z" };
    const fetchMock = vi.fn(async () => jsonResponse(200, answer));
    const backend = createHttpBackend({ fetch: fetchMock });
    expect(await backend.connect!("kiln_abc")).toEqual(answer);
    await backend.connect!();
    const [url, init] = fetchMock.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe("/api/connect");
    expect(init.method).toBe("POST");
    expect(init.credentials).toBe("same-origin");
    expect((init.headers as Record<string, string>)["x-kiln"]).toBe("1");
    expect(JSON.parse(init.body as string)).toEqual({ token: "kiln_abc" });
    const [, second] = fetchMock.mock.calls[1] as unknown as [string, RequestInit];
    expect(JSON.parse(second.body as string)).toEqual({});
  });

  it("reports RATE_LIMITED with the Retry-After wait", async () => {
    const fetchMock = vi.fn(
      async () =>
        new Response(JSON.stringify({ error: { code: "RATE_LIMITED", message: "too many failed connects" } }), {
          status: 429,
          headers: { "content-type": "application/json", "retry-after": "42" },
        }),
    );
    const error = (await createHttpBackend({ fetch: fetchMock }).connect!("kiln_x").catch(
      (e: unknown) => e,
    )) as KilnError;
    expect(error.code).toBe("RATE_LIMITED");
    expect(error.retryAfterSeconds).toBe(42);
  });

  it("disconnects through POST /api/disconnect", async () => {
    const fetchMock = vi.fn(async () => jsonResponse(200, { connected: false }));
    await createHttpBackend({ fetch: fetchMock }).disconnect!();
    const [url, init] = fetchMock.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe("/api/disconnect");
    expect(init.method).toBe("POST");
    expect(init.credentials).toBe("same-origin");
  });

  it("parses Retry-After as seconds or as a date", () => {
    expect(parseRetryAfter("17")).toBe(17);
    expect(parseRetryAfter(new Date(60_000).toUTCString(), 0)).toBe(60);
    expect(parseRetryAfter("soon")).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });

  it("has no folder picker", async () => {
    expect(await createHttpBackend().pickFolder()).toBeNull();
  });
});

class FakeEventSource {
  static instances: FakeEventSource[] = [];
  readyState = 0;
  closed = false;
  onmessage: ((e: MessageEvent<string>) => void) | null = null;
  onopen: (() => void) | null = null;
  onerror: (() => void) | null = null;
  constructor(public url: string) {
    FakeEventSource.instances.push(this);
  }
  close() {
    this.closed = true;
    this.readyState = 2;
  }
  message(data: string) {
    this.onmessage?.(new MessageEvent("message", { data }));
  }
}

describe("HTTP backend events", () => {
  it("reads KilnEvents from /api/events and closes on unsubscribe", () => {
    FakeEventSource.instances = [];
    const backend = createHttpBackend({ EventSource: FakeEventSource as unknown as typeof EventSource });
    const events: unknown[] = [];
    const stop = backend.subscribe((e) => events.push(e));
    const source = FakeEventSource.instances[0];
    expect(source.url).toBe("/api/events");

    const event = { id: 7, at: "2025-01-01T00:00:00Z", body: { type: "sessionRemoved", sessionId: "s1" } };
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    source.message(JSON.stringify(event));
    source.message("not json");
    expect(events).toEqual([event]);
    expect(warn).toHaveBeenCalledTimes(1);
    warn.mockRestore();

    stop();
    expect(source.closed).toBe(true);
  });

  it("reopens a stream the browser closed and asks the app to resync", () => {
    vi.useFakeTimers();
    try {
      FakeEventSource.instances = [];
      const backend = createHttpBackend({
        EventSource: FakeEventSource as unknown as typeof EventSource,
        reconnectMs: 100,
      });
      const events: { body: { type: string } }[] = [];
      const stop = backend.subscribe((e) => events.push(e), undefined, 3);
      const first = FakeEventSource.instances[0];
      // The first stream starts after the app state's last event; a reopened one refetches
      // instead, as the server may have restarted and numbers its events afresh.
      expect(first.url).toBe("/api/events?since=3");
      first.readyState = 2;
      first.onerror?.();
      vi.advanceTimersByTime(100);
      const second = FakeEventSource.instances[1];
      expect(second.url).toBe("/api/events");
      second.onopen?.();
      expect(events.map((e) => e.body.type)).toEqual(["resync"]);
      stop();
      expect(second.closed).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
  it("says when the server is lost and when it is back", () => {
    FakeEventSource.instances = [];
    const backend = createHttpBackend({ EventSource: FakeEventSource as unknown as typeof EventSource });
    const heard: boolean[] = [];
    const stop = backend.subscribe(
      () => {},
      (up) => heard.push(up),
    );
    const source = FakeEventSource.instances[0];
    source.onopen?.();
    // The browser retries by itself (readyState CONNECTING): lost all the same until it opens again.
    source.onerror?.();
    source.onopen?.();
    expect(heard).toEqual([true, false, true]);
    stop();
    source.onerror?.();
    expect(heard).toEqual([true, false, true]);
  });
});

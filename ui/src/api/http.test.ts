// Tests for the HTTP backend: request shape, error bodies → KilnError, network failures, events.
import { afterEach, describe, expect, it, vi } from "vitest";
import { KilnError } from "./backend";
import { createHttpBackend } from "./http";

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
    expect(JSON.parse(init.body as string)).toEqual({ sessionId: "s1", stop: true });
  });

  it("sends {} for commands without arguments", async () => {
    const fetchMock = vi.fn(async () => jsonResponse(200, { version: "1" }));
    vi.stubGlobal("fetch", fetchMock);
    await createHttpBackend().call("get_state", {});
    const [, init] = fetchMock.mock.calls[0] as unknown as [string, RequestInit];
    expect(init.body).toBe("{}");
  });

  it("turns an error body into a KilnError with its code and message", async () => {
    vi.stubGlobal("fetch", vi.fn(async () => jsonResponse(409, { error: { code: "SESSION_RUNNING", message: "Session s1 is running" } })));
    const error = await createHttpBackend()
      .call("reject_session", { sessionId: "s1" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KilnError);
    expect(error).toMatchObject({ code: "SESSION_RUNNING", message: "Session s1 is running" });
  });

  it("reports a failed fetch as NETWORK", async () => {
    vi.stubGlobal("fetch", vi.fn(async () => Promise.reject(new TypeError("Failed to fetch"))));
    const error = await createHttpBackend()
      .call("get_state", {})
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KilnError);
    expect((error as KilnError).code).toBe("NETWORK");
    expect((error as KilnError).message).toContain("Failed to fetch");
  });

  it("reports a non-JSON error response as INTERNAL with the status", async () => {
    vi.stubGlobal("fetch", vi.fn(async () => new Response("Bad Gateway", { status: 502, statusText: "Bad Gateway" })));
    const error = (await createHttpBackend()
      .call("get_state", {})
      .catch((e: unknown) => e)) as KilnError;
    expect(error.code).toBe("INTERNAL");
    expect(error.message).toContain("502");
  });

  it("returns null for delete_session when the record was removed", async () => {
    vi.stubGlobal("fetch", vi.fn(async () => new Response("null", { status: 200 })));
    const result = await createHttpBackend().call("delete_session", { sessionId: "s1", keepTranscript: false });
    expect(result).toBeNull();
  });

  it("uses a base URL when given one", async () => {
    const fetchMock = vi.fn(async () => jsonResponse(200, []));
    await createHttpBackend({ baseUrl: "http://127.0.0.1:9000/", fetch: fetchMock }).call("list_sessions", { includeArchived: true });
    expect((fetchMock.mock.calls[0] as unknown[])[0]).toBe("http://127.0.0.1:9000/api/list_sessions");
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
      const backend = createHttpBackend({ EventSource: FakeEventSource as unknown as typeof EventSource, reconnectMs: 100 });
      const events: { body: { type: string } }[] = [];
      const stop = backend.subscribe((e) => events.push(e));
      const first = FakeEventSource.instances[0];
      first.readyState = 2;
      first.onerror?.();
      vi.advanceTimersByTime(100);
      const second = FakeEventSource.instances[1];
      expect(second).toBeDefined();
      second.onopen?.();
      expect(events.map((e) => e.body.type)).toEqual(["resync"]);
      stop();
      expect(second.closed).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});

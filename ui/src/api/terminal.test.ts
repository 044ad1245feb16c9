// Tests for a terminal's output stream: base64 chunks to bytes, the browser's event stream (replay after a reconnect starts over, closed after exit, a refusal reported) and the desktop's channel (its attach calls in order).
import { describe, expect, it, vi } from "vitest";
import { KilnError } from "./backend";
import {
  attachTerminal,
  decodeBase64,
  decodeChunk,
  type TerminalStreamDeps,
  type TerminalStreamEvent,
} from "./terminal";

const bytes = (text: string) => Array.from(new TextEncoder().encode(text));
const b64 = (raw: number[]) => btoa(String.fromCharCode(...raw));

class FakeEventSource {
  static instances: FakeEventSource[] = [];
  readyState = 0;
  closed = false;
  onopen: (() => void) | null = null;
  onmessage: ((m: MessageEvent<string>) => void) | null = null;
  onerror: (() => void) | null = null;
  constructor(readonly url: string) {
    FakeEventSource.instances.push(this);
  }
  close() {
    this.closed = true;
    this.readyState = 2;
  }
  open() {
    this.readyState = 1;
    this.onopen?.();
  }
  send(chunk: unknown) {
    this.onmessage?.({ data: JSON.stringify(chunk) } as MessageEvent<string>);
  }
  fail(readyState: number) {
    this.readyState = readyState;
    this.onerror?.();
  }
}

function browser(): TerminalStreamDeps {
  FakeEventSource.instances = [];
  return {
    desktop: () => false,
    invoke: vi.fn(),
    createChannel: vi.fn(),
    EventSource: FakeEventSource as unknown as typeof EventSource,
  };
}

/** The events heard, output as text. */
function heard(events: TerminalStreamEvent[]) {
  return events.map((e) => (e.type === "output" ? new TextDecoder().decode(e.data) : e));
}

describe("decodeBase64 and decodeChunk", () => {
  it("gives the raw bytes, invalid UTF-8 and control bytes included", () => {
    const raw = [0x1b, 0x5b, 0x33, 0x31, 0x6d, 0xe2, 0x82, 0xac, 0xff, 0x00, 0x0a];
    expect(Array.from(decodeBase64(b64(raw)))).toEqual(raw);
    expect(decodeBase64("").length).toBe(0);
  });

  it("reads output and exit chunks and nothing else", () => {
    const output = decodeChunk({ type: "output", data: b64(bytes("kiln-42\r\n")) });
    expect(output?.type).toBe("output");
    expect(heard([output as TerminalStreamEvent])).toEqual(["kiln-42\r\n"]);
    expect(decodeChunk({ type: "exit", exitCode: 3 })).toEqual({ type: "exit", exitCode: 3 });
    expect(decodeChunk({ type: "exit", exitCode: null })).toEqual({ type: "exit", exitCode: null });
    expect(decodeChunk({ type: "output", data: "not base64 !" })).toBeNull();
    expect(decodeChunk({ type: "output" })).toBeNull();
    expect(decodeChunk({ type: "other" })).toBeNull();
    expect(decodeChunk("output")).toBeNull();
    expect(decodeChunk(null)).toBeNull();
  });
});

describe("attachTerminal in the browser", () => {
  it("opens the terminal's stream, hears output then exit, and closes it after exit", () => {
    const events: TerminalStreamEvent[] = [];
    attachTerminal("t 1", (e) => events.push(e), browser());
    const source = FakeEventSource.instances[0];
    expect(source.url).toBe("/api/terminal_stream?terminalId=t%201");
    source.open();
    source.send({ type: "output", data: b64(bytes("$ ")) });
    source.send({ type: "output", data: b64(bytes("echo hi\r\nhi\r\n")) });
    source.send({ type: "exit", exitCode: 0 });
    // The server ends the stream; the browser must not open it again (that would replay once more).
    expect(source.closed).toBe(true);
    source.send({ type: "output", data: b64(bytes("late")) });
    expect(heard(events)).toEqual(["$ ", "echo hi\r\nhi\r\n", { type: "exit", exitCode: 0 }]);
  });

  it("starts the screen over when the browser reopens a lost stream, which replays from the start", () => {
    const events: TerminalStreamEvent[] = [];
    attachTerminal("t1", (e) => events.push(e), browser());
    const source = FakeEventSource.instances[0];
    source.open();
    source.send({ type: "output", data: b64(bytes("one")) });
    source.fail(0);
    expect(events).toHaveLength(1);
    source.open();
    source.send({ type: "output", data: b64(bytes("one two")) });
    expect(heard(events)).toEqual(["one", { type: "reset" }, "one two"]);
  });

  it("reports a stream the server refused, and hears nothing once detached", () => {
    const events: TerminalStreamEvent[] = [];
    attachTerminal("t1", (e) => events.push(e), browser());
    FakeEventSource.instances[0].fail(2);
    expect(events).toHaveLength(1);
    expect(events[0].type).toBe("error");
    expect((events[0] as { error: KilnError }).error).toBeInstanceOf(KilnError);

    const after: TerminalStreamEvent[] = [];
    const detach = attachTerminal("t2", (e) => after.push(e), browser());
    const source = FakeEventSource.instances[0];
    source.open();
    detach();
    expect(source.closed).toBe(true);
    source.send({ type: "output", data: b64(bytes("x")) });
    source.fail(2);
    expect(after).toEqual([]);
  });

  it("skips a chunk it cannot read and goes on", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const events: TerminalStreamEvent[] = [];
    attachTerminal("t1", (e) => events.push(e), browser());
    const source = FakeEventSource.instances[0];
    source.onmessage?.({ data: "{not json" } as MessageEvent<string>);
    source.send({ type: "mystery" });
    source.send({ type: "output", data: b64(bytes("ok")) });
    expect(heard(events)).toEqual(["ok"]);
    warn.mockRestore();
  });
});

describe("attachTerminal on the desktop", () => {
  function desktop(invoke: TerminalStreamDeps["invoke"]) {
    const channels: ((message: unknown) => void)[] = [];
    const closed: number[] = [];
    const d: TerminalStreamDeps = {
      desktop: () => true,
      invoke: vi.fn(invoke),
      createChannel: (onMessage) => {
        channels.push(onMessage);
        const id = channels.length;
        return { channel: { id }, close: () => closed.push(id) };
      },
      EventSource: FakeEventSource as unknown as typeof EventSource,
    };
    return { d, channels, closed };
  }

  it("invokes attach_terminal with a channel and decodes what it brings", () => {
    const { d, channels, closed } = desktop(async () => null);
    const events: TerminalStreamEvent[] = [];
    const detach = attachTerminal("t1", (e) => events.push(e), d);
    expect(d.invoke).toHaveBeenCalledWith("attach_terminal", { terminalId: "t1", channel: { id: 1 } });
    channels[0]({ type: "output", data: b64(bytes("replay")) });
    channels[0]({ type: "output", data: b64(bytes(" live")) });
    detach();
    channels[0]({ type: "output", data: b64(bytes(" after")) });
    expect(heard(events)).toEqual(["replay", " live"]);
    expect(closed).toEqual([1]);
  });

  it("attaches a terminal again only after the call before has returned, and not at all once detached", async () => {
    const pending: (() => void)[] = [];
    const { d } = desktop(() => new Promise<null>((resolve) => pending.push(() => resolve(null))));
    const first = attachTerminal("t1", () => {}, d);
    first();
    attachTerminal("t1", () => {}, d);
    const third = attachTerminal("t1", () => {}, d);
    // Another terminal does not wait.
    attachTerminal("t2", () => {}, d);
    expect(vi.mocked(d.invoke).mock.calls.map(([, args]) => args)).toEqual([
      { terminalId: "t1", channel: { id: 1 } },
      { terminalId: "t2", channel: { id: 4 } },
    ]);
    pending[0]();
    await vi.waitFor(() => expect(d.invoke).toHaveBeenCalledTimes(3));
    expect(vi.mocked(d.invoke).mock.calls[2][1]).toEqual({ terminalId: "t1", channel: { id: 2 } });
    // The third view detached before its turn: its call is skipped.
    third();
    pending[2]();
    await new Promise((r) => setTimeout(r, 10));
    expect(d.invoke).toHaveBeenCalledTimes(3);
  });

  it("reports a refused attach as the engine's error", async () => {
    const { d } = desktop(async () => Promise.reject({ code: "TERMINAL_NOT_FOUND", message: "No such terminal" }));
    const events: TerminalStreamEvent[] = [];
    attachTerminal("t1", (e) => events.push(e), d);
    await vi.waitFor(() => expect(events).toHaveLength(1));
    expect(events[0]).toMatchObject({ type: "error", error: { code: "TERMINAL_NOT_FOUND" } });
  });
});

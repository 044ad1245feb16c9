// Tests for the Tauri backend: invoke shape, rejection → KilnError, event channel with `since`.
import { describe, expect, it, vi } from "vitest";
import type { KilnEvent } from "./types";
import { KilnError } from "./backend";
import { createTauriBackend, type TauriDeps } from "./tauri";

function deps(invokeImpl: TauriDeps["invoke"]) {
  const channels: ((e: KilnEvent) => void)[] = [];
  const d: TauriDeps = {
    invoke: vi.fn(invokeImpl),
    createChannel: (onMessage) => {
      channels.push(onMessage);
      return { id: channels.length };
    },
    openDialog: vi.fn(async () => "/home/dev/shop"),
  };
  return { d, channels };
}

const event = (id: number): KilnEvent => ({ id, at: "2025-01-01T00:00:00Z", body: { type: "resync" } });

describe("Tauri backend", () => {
  it("invokes the command with { args }", async () => {
    const { d } = deps(async () => ({ id: "s1" }));
    const result = await createTauriBackend(d).call("get_session", { sessionId: "s1" });
    expect(result).toEqual({ id: "s1" });
    expect(d.invoke).toHaveBeenCalledWith("get_session", { args: { sessionId: "s1" } });
  });

  it("turns a {code, message} rejection into a KilnError", async () => {
    const { d } = deps(async () => Promise.reject({ code: "MODULE_REQUIRED", message: "Name a module" }));
    const error = await createTauriBackend(d)
      .call("create_session", { brief: "x" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KilnError);
    expect(error).toMatchObject({ code: "MODULE_REQUIRED", message: "Name a module" });
  });

  it("subscribes with since=null, then resumes from the last event id", () => {
    const { d, channels } = deps(async () => null);
    const backend = createTauriBackend(d);
    const seen: number[] = [];
    const stop = backend.subscribe((e) => seen.push(e.id));
    expect(d.invoke).toHaveBeenLastCalledWith("subscribe", { channel: { id: 1 }, since: null });
    channels[0](event(4));
    channels[0](event(5));
    stop();
    channels[0](event(6)); // after unsubscribe: dropped
    expect(seen).toEqual([4, 5]);

    backend.subscribe(() => {});
    expect(d.invoke).toHaveBeenLastCalledWith("subscribe", { channel: { id: 2 }, since: 5 });
  });

  it("starts from the app state's last event until it has seen one of its own", () => {
    const { d } = deps(async () => null);
    const backend = createTauriBackend(d);
    backend.subscribe(() => {}, undefined, 12);
    expect(d.invoke).toHaveBeenLastCalledWith("subscribe", { channel: { id: 1 }, since: 12 });
  });

  it("picks a folder with the dialog plugin", async () => {
    const { d } = deps(async () => null);
    expect(await createTauriBackend(d).pickFolder()).toBe("/home/dev/shop");
    expect(d.openDialog).toHaveBeenCalledWith({ directory: true, multiple: false });
  });
});

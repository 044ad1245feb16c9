// Tests for the state reducer: session upserts, transcript dedupe by id, removal, workspace, resync, attachments, drafts, previews.
import { describe, expect, it } from "vitest";
import type { KilnEvent } from "../api/types";
import { KilnError } from "../api/backend";
import { appState, makeAttachment, makeEntry, makePreview, makeSession, workspace } from "../test/fixtures";
import { initialState, reducer, type State, visibleSessions } from "./reducer";

const ev = (body: KilnEvent["body"], id = 1): KilnEvent => ({ id, at: "2025-01-01T00:00:00Z", body });
const loaded: State = reducer(initialState, { type: "appLoaded", app: appState });

describe("reducer", () => {
  it("upserts sessions from session events", () => {
    const s1 = makeSession();
    let state = reducer(loaded, { type: "event", event: ev({ type: "session", session: s1 }) });
    expect(state.sessions.s1).toEqual(s1);
    const updated = makeSession({ state: "editing", updatedAt: "2025-01-01T10:05:00Z" });
    state = reducer(state, { type: "event", event: ev({ type: "session", session: updated }, 2) });
    expect(Object.keys(state.sessions)).toEqual(["s1"]);
    expect(state.sessions.s1.state).toBe("editing");
  });

  it("appends transcript entries once, by id, in id order", () => {
    let state = reducer(loaded, { type: "transcriptLoaded", sessionId: "s1", entries: [makeEntry(1), makeEntry(2)] });
    state = reducer(state, { type: "event", event: ev({ type: "transcript", entry: makeEntry(3) }) });
    const again = reducer(state, { type: "event", event: ev({ type: "transcript", entry: makeEntry(3) }) });
    expect(again).toBe(state);
    expect(again.transcripts.s1.map((e) => e.id)).toEqual([1, 2, 3]);

    // A fetch that overlaps what events already delivered merges without duplicates.
    const merged = reducer(again, { type: "transcriptLoaded", sessionId: "s1", entries: [makeEntry(0), makeEntry(2), makeEntry(4)] });
    expect(merged.transcripts.s1.map((e) => e.id)).toEqual([0, 1, 2, 3, 4]);
  });

  it("removes a session and its transcript on sessionRemoved", () => {
    let state = reducer(loaded, { type: "sessionUpserted", session: makeSession() });
    state = reducer(state, { type: "transcriptLoaded", sessionId: "s1", entries: [makeEntry(1)] });
    state = reducer(state, { type: "event", event: ev({ type: "sessionRemoved", sessionId: "s1" }) });
    expect(state.sessions.s1).toBeUndefined();
    expect(state.transcripts.s1).toBeUndefined();
    expect(state.removed.s1).toBe(true);
  });

  it("replaces the workspace, clearing sessions when the root changes", () => {
    let state = reducer(loaded, { type: "sessionUpserted", session: makeSession() });
    const renamed = { ...workspace, name: "shop-renamed" };
    state = reducer(state, { type: "event", event: ev({ type: "workspace", workspace: renamed }) });
    expect(state.app?.workspace?.name).toBe("shop-renamed");
    expect(state.sessions.s1).toBeDefined();

    const other = { ...workspace, root: "/home/dev/blog", name: "blog" };
    state = reducer(state, { type: "event", event: ev({ type: "workspace", workspace: other }) });
    expect(state.app?.workspace?.root).toBe("/home/dev/blog");
    expect(state.sessions).toEqual({});
  });

  it("bumps the epoch on resync", () => {
    const state = reducer(loaded, { type: "event", event: ev({ type: "resync" }) });
    expect(state.epoch).toBe(loaded.epoch + 1);
  });

  it("keeps a session event newer than a list fetched before it", () => {
    const fresh = makeSession({ state: "editing", updatedAt: "2025-01-01T10:05:00Z" });
    let state = reducer(loaded, { type: "sessionUpserted", session: fresh });
    state = reducer(state, { type: "sessionsLoaded", sessions: [makeSession(), makeSession({ id: "s2" })] });
    expect(state.sessions.s1.state).toBe("editing");
    expect(state.sessions.s2).toBeDefined();
  });

  it("lists active sessions newest first and shows shelved ones only with includeArchived", () => {
    let state = reducer(loaded, {
      type: "sessionsLoaded",
      sessions: [
        makeSession({ id: "old", createdAt: "2025-01-01T08:00:00Z" }),
        makeSession({ id: "new", createdAt: "2025-01-02T08:00:00Z" }),
        makeSession({ id: "arch", archivedAt: "2025-01-03T08:00:00Z" }),
      ],
    });
    expect(visibleSessions(state).map((s) => s.id)).toEqual(["new", "old"]);
    state = reducer(state, { type: "setIncludeArchived", value: true });
    expect(visibleSessions(state).map((s) => s.id)).toEqual(["new", "arch", "old"]);
  });

  it("adds an attachment to its session once, whichever of the answer and the event comes first", () => {
    const a1 = makeAttachment({ id: "a1" });
    let state = reducer(loaded, { type: "sessionUpserted", session: makeSession() });
    state = reducer(state, { type: "attachmentAdded", sessionId: "s1", attachment: a1 });
    expect(state.sessions.s1.attachments).toEqual([a1]);
    expect(reducer(state, { type: "attachmentAdded", sessionId: "s1", attachment: a1 })).toBe(state);
    expect(reducer(loaded, { type: "attachmentAdded", sessionId: "s9", attachment: a1 })).toBe(loaded);
  });

  it("sets and clears a session's composer draft", () => {
    const error = new KilnError("DRIVER_NOT_FOUND", "no claude");
    let state = reducer(loaded, { type: "draftSet", sessionId: "s1", draft: { text: "brief", error } });
    expect(state.drafts.s1).toEqual({ text: "brief", error });
    state = reducer(state, { type: "draftCleared", sessionId: "s1" });
    expect(state.drafts).toEqual({});
    expect(reducer(state, { type: "draftCleared", sessionId: "s1" })).toBe(state);
  });

  it("keeps each session's preview from events, and a call's answer only when no event came meanwhile", () => {
    let state = reducer(loaded, { type: "previewLoaded", preview: makePreview({ state: "starting" }), eventsSeen: 0 });
    expect(state.previews.s1.state).toBe("starting");
    state = reducer(state, { type: "event", event: ev({ type: "preview", preview: makePreview({ state: "ready" }) }) });
    state = reducer(state, { type: "event", event: ev({ type: "preview", preview: makePreview({ sessionId: "s2", state: "crashed" }) }, 2) });
    expect(state.previews.s1.state).toBe("ready");
    expect(state.previews.s2.state).toBe("crashed");
    // Asked before the event: dropped. Asked after it: applied.
    expect(reducer(state, { type: "previewLoaded", preview: makePreview({ state: "starting" }), eventsSeen: 0 })).toBe(state);
    expect(reducer(state, { type: "previewLoaded", preview: makePreview({ state: "stopped" }), eventsSeen: 1 }).previews.s1.state).toBe("stopped");
    // A removed session's preview goes with it.
    state = reducer(state, { type: "event", event: ev({ type: "sessionRemoved", sessionId: "s1" }, 3) });
    expect(state.previews.s1).toBeUndefined();
    expect(state.previews.s2).toBeDefined();
  });
});

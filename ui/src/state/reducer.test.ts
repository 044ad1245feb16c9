// Tests for the UI-local reducer (drafts, "Show archived") and the pure helpers: transcript merging by id, the dashboard's visible sessions.
import { describe, expect, it } from "vitest";
import { KilnError } from "../api/backend";
import { makeEntry, makeSession } from "../test/fixtures";
import { initialState, mergeEntries, newerSession, reducer, visibleSessions } from "./reducer";

describe("mergeEntries", () => {
  it("appends entries once, by id, in id order", () => {
    const held = mergeEntries([makeEntry(1), makeEntry(2)], [makeEntry(3)]);
    expect(held.map((e) => e.id)).toEqual([1, 2, 3]);
    // Nothing new: the same array comes back (no render).
    expect(mergeEntries(held, [makeEntry(3)])).toBe(held);
    // A fetch that overlaps what events already delivered merges without duplicates.
    expect(mergeEntries(held, [makeEntry(0), makeEntry(2), makeEntry(4)]).map((e) => e.id)).toEqual([0, 1, 2, 3, 4]);
  });

  it("keeps the first copy of an id given twice in one batch", () => {
    const merged = mergeEntries([], [makeEntry(5, { text: "first" }), makeEntry(5, { text: "second" })]);
    expect(merged.map((e) => e.text)).toEqual(["first"]);
  });
});

describe("sessions", () => {
  it("lists active sessions newest first and shows shelved ones only with includeArchived", () => {
    const list = [
      makeSession({ id: "old", createdAt: "2025-01-01T08:00:00Z" }),
      makeSession({ id: "new", createdAt: "2025-01-02T08:00:00Z" }),
      makeSession({ id: "arch", archivedAt: "2025-01-03T08:00:00Z" }),
    ];
    expect(visibleSessions(list, false).map((s) => s.id)).toEqual(["new", "old"]);
    expect(visibleSessions(list, true).map((s) => s.id)).toEqual(["new", "arch", "old"]);
  });

  it("picks the newer copy of a session by updatedAt", () => {
    const listed = makeSession();
    const fresh = makeSession({ state: "editing", updatedAt: "2025-01-01T10:05:00Z" });
    expect(newerSession(listed, fresh)).toBe(fresh);
    expect(newerSession(fresh, listed)).toBe(fresh);
  });
});

describe("reducer", () => {
  it("sets and clears a session's composer draft", () => {
    const error = new KilnError("DRIVER_NOT_FOUND", "no claude");
    let state = reducer(initialState, { type: "draftSet", sessionId: "s1", draft: { text: "brief", error } });
    expect(state.drafts.s1).toEqual({ text: "brief", error });
    state = reducer(state, { type: "draftCleared", sessionId: "s1" });
    expect(state.drafts).toEqual({});
    expect(reducer(state, { type: "draftCleared", sessionId: "s1" })).toBe(state);
  });

  it("switches Show archived", () => {
    const state = reducer(initialState, { type: "setIncludeArchived", value: true });
    expect(state.includeArchived).toBe(true);
    expect(reducer(state, { type: "setIncludeArchived", value: true })).toBe(state);
  });
});

describe("what was pointed at in the preview", () => {
  const item = (id: number) => ({
    screenshot: {
      id,
      kind: "element" as const,
      checkpoint: 0,
      moduleId: null,
      pagePath: "/",
      width: 10,
      height: 10,
      takenAt: "2026-01-01T00:00:00Z",
    },
    context: { screenshotId: id, pagePath: "/", selector: `#e${id}` },
  });

  it("adds once per screenshot, removes one, clears the session's, and keeps at most eight", () => {
    let state = reducer(initialState, { type: "pointedAdded", sessionId: "s1", item: item(1) });
    state = reducer(state, { type: "pointedAdded", sessionId: "s1", item: item(1) });
    state = reducer(state, { type: "pointedAdded", sessionId: "s1", item: item(2) });
    expect(state.pointed.s1.map((i) => i.screenshot.id)).toEqual([1, 2]);
    state = reducer(state, { type: "pointedRemoved", sessionId: "s1", screenshotId: 1 });
    expect(state.pointed.s1.map((i) => i.screenshot.id)).toEqual([2]);
    state = reducer(state, { type: "pointedCleared", sessionId: "s1" });
    expect(state.pointed).toEqual({});
    for (let id = 1; id <= 10; id++) state = reducer(state, { type: "pointedAdded", sessionId: "s2", item: item(id) });
    expect(state.pointed.s2.map((i) => i.screenshot.id)).toEqual([3, 4, 5, 6, 7, 8, 9, 10]);
  });
});

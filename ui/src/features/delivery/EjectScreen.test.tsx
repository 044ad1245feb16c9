// Tests for the eject screen: the plan per module, blockers and Run review, Deliver anyway past gate blockers only, the target choice, confirm with the planId, live steps from events, the done screen's link, PLAN_STALE and a failed run's Retry.
import { act, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { KilnError } from "../../api/backend";
import type { Blocker, DeliveryPlan, DeliveryRun, DeliveryStep, KilnEvent, ReviewView } from "../../api/types";
import { fakeBackend, makeSession } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";
import { EjectScreen } from "./EjectScreen";

const twoModules = makeSession({
  modules: [
    { id: "@shop/cart", directory: "modules/cart", kind: "edit", joinedAt: "2025-01-01T10:00:00Z", baseSequence: 0 },
    {
      id: "@shop/coupons",
      directory: "modules/coupons",
      kind: "new",
      joinedAt: "2025-01-01T10:00:00Z",
      baseSequence: 0,
    },
  ],
});

function review(moduleId: string, overrides: Partial<ReviewView> = {}): ReviewView {
  return {
    moduleId,
    passed: true,
    stale: false,
    summary: "ok",
    report: "REVIEW: pass - ok",
    createdAt: "2025-01-01T11:00:00Z",
    ...overrides,
  };
}

function makePlan(overrides: Partial<DeliveryPlan> = {}): DeliveryPlan {
  return {
    sessionId: "s1",
    target: "workspace",
    availableTargets: [
      { target: "workspace", available: true, reason: null },
      { target: "git-pr", available: false, reason: "no git remote named origin" },
    ],
    modules: [
      {
        moduleId: "@shop/cart",
        directory: "modules/cart",
        group: "module",
        kind: "edit",
        added: ["modules/cart/src/server/coupon.ts"],
        overwritten: ["modules/cart/src/server/index.ts"],
        deleted: ["modules/cart/src/old.ts"],
        newPackages: [],
        enable: false,
      },
      {
        moduleId: "@shop/coupons",
        directory: "modules/coupons",
        group: "module",
        kind: "new",
        added: ["modules/coupons/package.json"],
        overwritten: [],
        deleted: [],
        newPackages: ["zod"],
        enable: true,
      },
    ],
    gates: ["tests (@shop/cart)", "typecheck (@shop/coupons)"],
    steps: ["Run the gates", "Copy into the workspace", "install", "enable @shop/coupons", "typecheck"],
    restartNeeded: true,
    blockers: [],
    branch: null,
    planId: "plan-1",
    ...overrides,
  };
}

function step(id: string, state: DeliveryStep["state"], output = ""): DeliveryStep {
  return { id, title: id, moduleId: null, state, output, startedAt: null, endedAt: null };
}

function makeRun(overrides: Partial<DeliveryRun> = {}): DeliveryRun {
  return {
    id: "r1",
    sessionId: "s1",
    target: "workspace",
    state: "running",
    steps: [step("gates", "pending"), step("copy", "pending")],
    startedAt: "2025-01-01T12:00:00Z",
    endedAt: null,
    pullRequest: null,
    landed: [],
    error: null,
    ...overrides,
  };
}

const deliveryEvent = (run: DeliveryRun): KilnEvent =>
  ({ id: 1, at: run.startedAt, body: { type: "delivery", run } }) as KilnEvent;

function setup(plan: DeliveryPlan | (() => DeliveryPlan), session = twoModules, latest: DeliveryRun | null = null) {
  const backend = fakeBackend({
    get_session: () => session,
    get_delivery: () => latest,
    plan_delivery: typeof plan === "function" ? plan : () => plan,
    deliver: () => makeRun(),
  });
  renderWithStore(<EjectScreen sessionId="s1" />, backend);
  return backend;
}

afterEach(() => vi.restoreAllMocks());

describe("EjectScreen", () => {
  it("shows the plan per module: files landing, deleted, new packages, enable; the gates, steps and restart", async () => {
    setup(makePlan());
    const modules = await screen.findAllByTestId("plan-module");
    expect(modules).toHaveLength(2);
    const cart = modules.find((m) => m.dataset.module === "@shop/cart")!;
    expect(within(cart).getByTestId("plan-added")).toHaveTextContent("modules/cart/src/server/coupon.ts");
    expect(within(cart).getByTestId("plan-overwritten")).toHaveTextContent("modules/cart/src/server/index.ts");
    expect(within(cart).getByTestId("plan-deleted")).toHaveTextContent("modules/cart/src/old.ts");
    expect(within(cart).queryByTestId("plan-enable")).toBeNull();
    const coupons = modules.find((m) => m.dataset.module === "@shop/coupons")!;
    expect(within(coupons).getByTestId("plan-packages")).toHaveTextContent("zod");
    expect(within(coupons).getByTestId("plan-enable")).toBeInTheDocument();
    expect(screen.getByTestId("plan-gates")).toHaveTextContent("tests (@shop/cart)");
    expect(within(screen.getByTestId("plan-steps")).getAllByRole("listitem")).toHaveLength(5);
    expect(screen.getByTestId("plan-restart")).toHaveTextContent("must restart");
    expect(screen.getByTestId("confirm-delivery")).toBeEnabled();
  });

  it("says nothing changed instead of offering an empty delivery", async () => {
    const empty = makePlan({
      modules: [
        {
          moduleId: "@shop/cart",
          directory: "modules/cart",
          group: "module",
          kind: "edit",
          added: [],
          overwritten: [],
          deleted: [],
          newPackages: [],
          enable: false,
        },
      ],
    });
    setup(
      empty,
      makeSession({
        state: "review",
        changed: false,
        usage: {
          total: {
            turns: 2,
            inputTokens: 0,
            outputTokens: 0,
            cacheReadTokens: 0,
            cacheWriteTokens: 0,
            costUsd: null,
            unknownCostTurns: 0,
          },
          byRole: [],
        },
      }),
    );
    expect(await screen.findByTestId("nothing-to-deliver")).toHaveTextContent(
      "The agent's turns changed no files: there is nothing to deliver.",
    );
    expect(screen.getByTestId("confirm-delivery")).toBeDisabled();
  });

  it("offers no choice with one usable target and lists the unusable one's reason", async () => {
    const one = setup(makePlan());
    await screen.findAllByTestId("plan-module");
    expect(screen.queryByTestId("target-workspace")).toBeNull();
    expect(screen.queryByTestId("target-git-pr")).toBeNull();
    expect(screen.getByTestId("targets-unavailable")).toHaveTextContent("no git remote named origin");
    expect(one.call).toHaveBeenCalledWith("plan_delivery", { sessionId: "s1" });
  });

  it("offers a choice between two usable targets and plans the one picked", async () => {
    const both = [
      { target: "workspace" as const, available: true, reason: null },
      { target: "git-pr" as const, available: true, reason: null },
    ];
    const backend = fakeBackend({
      get_session: () => twoModules,
      get_delivery: () => null,
      plan_delivery: (args) =>
        makePlan({
          availableTargets: both,
          target: args.target ?? "workspace",
          branch: args.target === "git-pr" ? "kiln/cart-s1" : null,
          planId: `plan-${args.target ?? "default"}`,
        }),
      deliver: () => makeRun({ target: "git-pr" }),
    });
    renderWithStore(<EjectScreen sessionId="s1" />, backend);
    const pr = await screen.findByTestId("target-git-pr");
    expect(screen.getByTestId("target-workspace")).toHaveAttribute("aria-checked", "true");
    fireEvent.click(pr);
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("plan_delivery", { sessionId: "s1", target: "git-pr" }),
    );
    expect(await screen.findByTestId("plan-branch")).toHaveTextContent("kiln/cart-s1");
    expect(screen.getByTestId("target-git-pr")).toHaveAttribute("aria-checked", "true");
    fireEvent.click(screen.getByTestId("confirm-delivery"));
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("deliver", {
        sessionId: "s1",
        target: "git-pr",
        planId: "plan-git-pr",
      }),
    );
  });

  it("shows blockers with their code, disables confirm, and Run review starts the module's review; a passing review re-plans", async () => {
    const session = makeSession({ reviews: [review("@shop/cart", { stale: true })] });
    let blocked = true;
    const backend = setup(
      () =>
        makePlan({
          blockers: blocked
            ? [
                {
                  code: "DELIVERY_BLOCKED",
                  message: "@shop/cart's review is stale: its files changed since",
                  moduleId: "@shop/cart",
                  paths: [],
                  overridable: false,
                },
              ]
            : [],
        }),
      session,
    );
    backend.handle({ review_module: () => ({ ...session, running: true }) });
    const blocker = await screen.findByTestId("blocker");
    expect(blocker).toHaveAttribute("data-code", "DELIVERY_BLOCKED");
    expect(blocker).toHaveTextContent("review is stale");
    expect(screen.getByTestId("confirm-delivery")).toBeDisabled();

    fireEvent.click(within(blocker).getByTestId("run-review"));
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("review_module", { sessionId: "s1", moduleId: "@shop/cart" }),
    );
    await waitFor(() => expect(within(screen.getByTestId("blocker")).getByTestId("run-review")).toBeDisabled());

    // The review passes: the session event brings it, and the plan is made again without the blocker.
    blocked = false;
    const plans = backend.call.mock.calls.filter((c) => c[0] === "plan_delivery").length;
    act(() =>
      backend.emit({
        id: 2,
        at: "",
        body: {
          type: "session",
          session: {
            ...session,
            running: false,
            reviews: [review("@shop/cart", { createdAt: "2025-01-01T12:30:00Z" })],
          },
        },
      } as KilnEvent),
    );
    await waitFor(() => expect(backend.call.mock.calls.filter((c) => c[0] === "plan_delivery").length).toBe(plans + 1));
    await waitFor(() => expect(screen.queryByTestId("blocker")).toBeNull());
    expect(screen.getByTestId("confirm-delivery")).toBeEnabled();
  });

  const gateBlocker: Blocker = {
    code: "DELIVERY_BLOCKED",
    message: "tests failed in `@shop/cart`: 1 new failure: `applies a coupon`",
    moduleId: "@shop/cart",
    paths: [],
    overridable: true,
  };
  const reviewBlocker: Blocker = {
    code: "DELIVERY_BLOCKED",
    message: "@shop/coupons's review asks for changes",
    moduleId: "@shop/coupons",
    paths: [],
    overridable: false,
  };
  const reviewed = makeSession({ reviews: [review("@shop/cart"), review("@shop/coupons", { passed: false })] });

  it("offers Deliver anyway when only gates block: it asks why, and delivers with the reason", async () => {
    const backend = setup(makePlan({ planId: "plan-7", blockers: [gateBlocker] }), reviewed);
    const blocker = await screen.findByTestId("blocker");
    expect(within(blocker).getByTestId("blocker-overridable")).toHaveTextContent("can deliver anyway");
    expect(screen.getByTestId("blockers-override")).toHaveTextContent("Only failing gates block this delivery");
    expect(screen.getByTestId("confirm-delivery")).toBeDisabled();
    expect(screen.queryByTestId("deliver-anyway-form")).toBeNull();

    fireEvent.click(screen.getByTestId("deliver-anyway"));
    const reason = screen.getByLabelText("Why deliver past the failing gates?");
    expect(reason).toBeRequired();
    expect(reason).toHaveAttribute("maxLength", "2000");
    const go = screen.getByTestId("confirm-deliver-anyway");
    // A reason is required: blank is not one.
    expect(go).toBeDisabled();
    fireEvent.change(reason, { target: { value: "   " } });
    expect(go).toBeDisabled();
    fireEvent.click(go);
    expect(backend.call).not.toHaveBeenCalledWith("deliver", expect.anything());

    fireEvent.change(reason, { target: { value: "  the coupon test fails on main too  " } });
    expect(go).toBeEnabled();
    fireEvent.click(go);
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("deliver", {
        sessionId: "s1",
        target: "workspace",
        planId: "plan-7",
        anyway: "the coupon test fails on main too",
      }),
    );
    expect(await screen.findAllByTestId("delivery-step")).toHaveLength(2);
  });

  it("offers a failing gate's way out: send the failure to the agent, or re-run the gates; never a review", async () => {
    const failing = makeSession({ reviews: [review("@shop/cart", { passed: false })] });
    const backend = setup(makePlan({ blockers: [gateBlocker] }), failing);
    backend.handle({ send_message: () => ({ ...failing, running: true }) });
    const blocker = await screen.findByTestId("blocker");
    expect(within(blocker).queryByTestId("run-review")).toBeNull();
    expect(within(blocker).getByTestId("run-gates")).toHaveTextContent("Re-run gates");
    fireEvent.click(within(blocker).getByTestId("send-failure"));
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("send_message", {
        sessionId: "s1",
        text: expect.stringContaining("tests failed in `@shop/cart`: 1 new failure"),
      }),
    );
  });

  it("offers no Deliver anyway while a review or conflict blocks too, and marks only the gate blocker", async () => {
    setup(makePlan({ blockers: [gateBlocker, reviewBlocker] }), reviewed);
    const blockers = await screen.findAllByTestId("blocker");
    expect(blockers.map((b) => within(b).queryByTestId("blocker-overridable") !== null)).toEqual([true, false]);
    expect(screen.getByTestId("blockers-override")).toHaveTextContent("the other blockers cannot");
    expect(screen.queryByTestId("deliver-anyway")).toBeNull();
    expect(screen.getByTestId("confirm-delivery")).toBeDisabled();
  });

  it("offers no Deliver anyway for review blockers alone", async () => {
    setup(makePlan({ blockers: [reviewBlocker] }), reviewed);
    await screen.findByTestId("blocker");
    expect(screen.queryByTestId("blocker-overridable")).toBeNull();
    expect(screen.queryByTestId("blockers-override")).toBeNull();
    expect(screen.queryByTestId("deliver-anyway")).toBeNull();
  });

  it("shows the engine's refusal of Deliver anyway in words, with its code", async () => {
    const backend = setup(makePlan({ blockers: [gateBlocker] }), reviewed);
    backend.handle({
      deliver: () => {
        throw new KilnError("INVALID_INPUT", "the reason to deliver anyway is empty");
      },
    });
    fireEvent.click(await screen.findByTestId("deliver-anyway"));
    fireEvent.change(screen.getByTestId("deliver-anyway-reason"), { target: { value: "known flake" } });
    fireEvent.click(screen.getByTestId("confirm-deliver-anyway"));
    const error = await screen.findByTestId("confirm-error");
    expect(error).toHaveTextContent("the reason to deliver anyway is empty");
    expect(error).toHaveTextContent("INVALID_INPUT");
    expect(screen.queryByTestId("delivery-step")).toBeNull();
  });

  it("confirms with the plan's planId, then shows the steps as delivery events update them, and the done screen with the pull request link", async () => {
    const open = vi.spyOn(window, "open").mockImplementation(() => null);
    const backend = setup(makePlan({ planId: "plan-42" }));
    fireEvent.click(await screen.findByTestId("confirm-delivery"));
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("deliver", { sessionId: "s1", target: "workspace", planId: "plan-42" }),
    );

    let steps = await screen.findAllByTestId("delivery-step");
    expect(steps.map((s) => s.dataset.state)).toEqual(["pending", "pending"]);

    act(() =>
      backend.emit(deliveryEvent(makeRun({ steps: [step("gates", "passed", "ok 3 tests"), step("copy", "running")] }))),
    );
    steps = screen.getAllByTestId("delivery-step");
    expect(steps.map((s) => s.dataset.state)).toEqual(["passed", "running"]);
    expect(screen.queryByTestId("step-output")).toBeNull();
    fireEvent.click(within(steps[0]).getByTestId("step-output-toggle"));
    expect(within(steps[0]).getByTestId("step-output")).toHaveTextContent("ok 3 tests");

    const pr = {
      url: "https://github.example/acme/shop/pull/7",
      number: 7,
      branch: "kiln/cart-s1",
      via: "api",
      created: true,
    };
    act(() =>
      backend.emit(
        deliveryEvent(
          makeRun({
            state: "delivered",
            endedAt: "2025-01-01T12:01:00Z",
            steps: [step("gates", "passed"), step("copy", "passed")],
            pullRequest: pr,
            landed: ["modules/cart/src/server/coupon.ts"],
          }),
        ),
      ),
    );
    const done = await screen.findByTestId("delivery-done");
    expect(done).toHaveTextContent("modules/cart/src/server/coupon.ts");
    const link = within(done).getByTestId("pr-link");
    expect(link).toHaveTextContent("#7");
    expect(link).toHaveAttribute("href", pr.url);
    fireEvent.click(link);
    expect(open).toHaveBeenCalledWith(pr.url, "_blank", "noopener");
  });

  it("re-plans when the confirmed plan is stale, says so, and confirms the new plan's id", async () => {
    let n = 0;
    const backend = setup(() => makePlan({ planId: `plan-${++n}` }));
    backend.handle({
      deliver: (args) => {
        if (args.planId === "plan-1") throw new KilnError("PLAN_STALE", "the session changed since the plan");
        return makeRun();
      },
    });
    fireEvent.click(await screen.findByTestId("confirm-delivery"));
    expect(await screen.findByTestId("replanned")).toHaveTextContent("planned again");
    expect(screen.queryByTestId("delivery-step")).toBeNull();
    fireEvent.click(screen.getByTestId("confirm-delivery"));
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("deliver", { sessionId: "s1", target: "workspace", planId: "plan-2" }),
    );
    expect(await screen.findAllByTestId("delivery-step")).toHaveLength(2);
  });

  it("shows a failed run's failing step output and error, and Retry plans again", async () => {
    const failed = makeRun({
      state: "failed",
      steps: [
        step("gates", "passed"),
        step("install", "failed", "npm ERR! 404 left-pad"),
        step("typecheck", "skipped"),
      ],
      error: { code: "INTERNAL", message: "install failed (exit 1)" },
    });
    const backend = setup(makePlan());
    fireEvent.click(await screen.findByTestId("confirm-delivery"));
    await screen.findAllByTestId("delivery-step");
    act(() => backend.emit(deliveryEvent(failed)));
    const stepsShown = await screen.findAllByTestId("delivery-step");
    expect(stepsShown.map((s) => s.dataset.state)).toEqual(["passed", "failed", "skipped"]);
    expect(within(stepsShown[1]).getByTestId("step-output")).toHaveTextContent("npm ERR! 404 left-pad");
    expect(screen.getByTestId("delivery-failed")).toHaveTextContent("install failed (exit 1)");
    const before = backend.call.mock.calls.filter((c) => c[0] === "plan_delivery").length;
    fireEvent.click(screen.getByTestId("retry-delivery"));
    await waitFor(() =>
      expect(backend.call.mock.calls.filter((c) => c[0] === "plan_delivery").length).toBe(before + 1),
    );
    expect(await screen.findByTestId("confirm-delivery")).toBeEnabled();
  });

  it("opens on the latest run when one exists", async () => {
    setup(makePlan(), twoModules, makeRun({ steps: [step("gates", "running")] }));
    const steps = await screen.findAllByTestId("delivery-step");
    expect(steps[0]).toHaveAttribute("data-state", "running");
    expect(screen.queryByTestId("confirm-delivery")).toBeNull();
  });
});

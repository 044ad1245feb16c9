// Tests for the new-session screen: module chips, Ctrl+Enter, create args, inline errors, held files and the first turn.
import { act, fireEvent, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { App } from "../../App";
import type { AddAttachmentArgs, AttachmentView, CreateSessionArgs } from "../../api/types";
import { type FakeBackend, fakeBackend, makeAttachment, makeSession, makeSettings } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";
import { insertAt, NewSession } from "./NewSession";

const created = makeSession({ id: "new-1", title: "Coupons", brief: "Add coupons to @shop/cart", state: "editing" });

/** The commands called, in order, without the app's own fetches. */
function flow(backend: FakeBackend): string[] {
  const own = new Set([
    "get_state",
    "list_sessions",
    "workspace_usage",
    "get_session",
    "get_transcript",
    "get_settings",
    "get_gates",
  ]);
  return backend.call.mock.calls.map((c) => c[0] as string).filter((c) => !own.has(c));
}

/** The whole app on the new-session screen, so the session view it leads to is there too. */
async function renderApp(backend: FakeBackend) {
  window.location.hash = "#/new";
  renderWithStore(<App />, backend);
  return (await screen.findByTestId("brief")) as HTMLTextAreaElement;
}

async function arrived(sessionId: string) {
  await waitFor(() => expect(window.location.hash).toBe(`#/session/${sessionId}`));
  await act(async () => window.dispatchEvent(new HashChangeEvent("hashchange")));
}

/** Handlers for the session the screen creates; get_session answers with what was attached so far. */
function sessionHandlers() {
  const attachments: AttachmentView[] = [];
  return {
    create_session: () => created,
    get_session: () => ({ ...created, attachments: [...attachments] }),
    get_transcript: () => [],
    add_attachment: (args: AddAttachmentArgs) => {
      const attachment = makeAttachment({ id: `id-${args.name}`, name: args.name });
      attachments.push(attachment);
      return attachment;
    },
  };
}

describe("insertAt", () => {
  it("pads the inserted id with spaces", () => {
    expect(insertAt("", 0, 0, "@a")).toEqual({ value: "@a ", caret: 3 });
    expect(insertAt("fix in", 6, 6, "@a")).toEqual({ value: "fix in @a ", caret: 10 });
    expect(insertAt("fix  now", 4, 4, "@a")).toEqual({ value: "fix @a now", caret: 6 });
  });
});

describe("NewSession", () => {
  it("inserts a module id from its chip and creates the session with Ctrl+Enter", async () => {
    const backend = fakeBackend({ create_session: () => makeSession({ id: "new-1" }) });
    renderWithStore(<NewSession />, backend);

    const brief = (await screen.findByTestId("brief")) as HTMLTextAreaElement;
    fireEvent.change(brief, { target: { value: "Add coupons to" } });
    brief.setSelectionRange(brief.value.length, brief.value.length);
    fireEvent.click(screen.getByRole("button", { name: "@shop/cart" }));
    expect(brief.value).toBe("Add coupons to @shop/cart ");

    fireEvent.keyDown(brief, { key: "Enter", ctrlKey: true });
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("create_session", { brief: "Add coupons to @shop/cart" }),
    );
    await waitFor(() => expect(window.location.hash).toBe("#/session/new-1"));
  });

  it("sends the title when given", async () => {
    const backend = fakeBackend({ create_session: () => makeSession() });
    renderWithStore(<NewSession />, backend);
    fireEvent.change(await screen.findByTestId("brief"), { target: { value: "Do it in @shop/api" } });
    fireEvent.change(screen.getByTestId("title"), { target: { value: " Rate limits " } });
    fireEvent.click(screen.getByTestId("create-session"));
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("create_session", {
        brief: "Do it in @shop/api",
        title: "Rate limits",
      }),
    );
  });

  it("shows MODULE_REQUIRED inline and stays on the form", async () => {
    const backend = fakeBackend({
      create_session: () => {
        throw { code: "MODULE_REQUIRED", message: "Name at least one module" };
      },
    });
    renderWithStore(<NewSession />, backend);
    fireEvent.change(await screen.findByTestId("brief"), { target: { value: "Make it faster" } });
    fireEvent.click(screen.getByTestId("create-session"));
    const error = await screen.findByTestId("error");
    expect(error).toHaveTextContent("Name at least one module");
    expect(error).toHaveTextContent("MODULE_REQUIRED");
    expect(screen.getByTestId("create-session")).toBeEnabled();
    expect(window.location.hash).toBe("");
  });

  it("starts from a GitHub issue: the brief is optional and the engine's brief is the first message", async () => {
    const fromIssue = makeSession({
      ...created,
      brief: "GitHub issue acme/shop#12: Cart total\nhttps://github.com/acme/shop/issues/12",
      issue: { url: "https://github.com/acme/shop/issues/12", number: 12, repo: "acme/shop" },
    });
    const backend = fakeBackend({
      ...sessionHandlers(),
      create_session: () => fromIssue,
      get_session: () => fromIssue,
      list_issues: () => [
        {
          number: 12,
          title: "Cart total",
          author: "alice",
          labels: [],
          updatedAt: "",
          url: "https://github.com/acme/shop/issues/12",
        },
      ],
      send_message: () => ({ ...fromIssue, running: true }),
    });
    await renderApp(backend);
    expect(screen.getByTestId("create-session")).toBeDisabled();
    fireEvent.click(screen.getByTestId("from-issue"));
    fireEvent.click(await screen.findByTestId("issue-row"));
    expect(screen.getByTestId("issue-title")).toHaveTextContent("#12 Cart total");
    expect(screen.getByTestId("create-session")).toBeEnabled();
    fireEvent.click(screen.getByTestId("create-session"));
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("create_session", {
        brief: "",
        issue: "https://github.com/acme/shop/issues/12",
      }),
    );
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("send_message", { sessionId: "new-1", text: fromIssue.brief }),
    );
    await arrived("new-1");
    expect(await screen.findByTestId("session-issue")).toHaveTextContent("acme/shop#12");
  });

  it("keeps Create disabled while the brief is empty", async () => {
    renderWithStore(<NewSession />, fakeBackend());
    expect(await screen.findByTestId("create-session")).toBeDisabled();
  });

  it("holds chosen, pasted and dropped files as chips, refuses bad ones at once, and removes one", async () => {
    renderWithStore(<NewSession />, fakeBackend());
    const brief = await screen.findByTestId("brief");
    await userEvent.upload(screen.getByTestId("attach-input"), new File(["png"], "mock.png", { type: "image/png" }));
    fireEvent.paste(brief, {
      clipboardData: { files: [new File(["# Spec"], "spec.md")], types: ["Files"], items: [] },
    });
    fireEvent.drop(brief.closest("form")!, {
      dataTransfer: { files: [new File([""], "empty.txt")], types: ["Files"], items: [] },
    });

    const chips = screen.getAllByTestId("attachment-chip");
    expect(chips.map((c) => c.textContent)).toEqual(["mock.png3 B", "spec.md6 B"]);
    expect(screen.getByTestId("attachment-error")).toHaveTextContent("ATTACHMENT_EMPTY");
    fireEvent.click(within(chips[0]).getByTestId("remove-attachment"));
    expect(screen.getAllByTestId("attachment-chip").map((c) => c.textContent)).toEqual(["spec.md6 B"]);
  });

  it("creates the session, attaches each held file, then sends the brief, in that order", async () => {
    const backend = fakeBackend({ ...sessionHandlers(), send_message: () => ({ ...created, running: true }) });
    const brief = await renderApp(backend);
    fireEvent.change(brief, { target: { value: "  Add coupons to @shop/cart  " } });
    await userEvent.upload(screen.getByTestId("attach-input"), [
      new File(["hello"], "notes.txt", { type: "text/plain" }),
      new File(["{}"], "data.json", { type: "application/json" }),
    ]);
    expect(screen.getByTestId("start-now")).toBeChecked();
    fireEvent.click(screen.getByTestId("create-session"));

    await arrived("new-1");
    expect(flow(backend)).toEqual(["create_session", "add_attachment", "add_attachment", "send_message"]);
    expect(backend.call).toHaveBeenCalledWith("create_session", { brief: "Add coupons to @shop/cart" });
    expect(backend.call).toHaveBeenCalledWith("add_attachment", {
      sessionId: "new-1",
      name: "notes.txt",
      dataBase64: "aGVsbG8=",
    });
    expect(backend.call).toHaveBeenCalledWith("add_attachment", {
      sessionId: "new-1",
      name: "data.json",
      dataBase64: "e30=",
    });
    expect(backend.call).toHaveBeenCalledWith("send_message", {
      sessionId: "new-1",
      text: "Add coupons to @shop/cart",
    });
    expect(await screen.findByTestId("message")).toHaveValue("");
    expect(screen.getAllByTestId("attachment-chip").map((c) => c.textContent)).toEqual([
      "notes.txt2 KB",
      "data.json2 KB",
    ]);
  });

  it("opens the session with the brief in its composer and the error when send_message fails", async () => {
    const backend = fakeBackend({
      ...sessionHandlers(),
      send_message: () => {
        throw { code: "DRIVER_NOT_FOUND", message: "claude is not installed" };
      },
    });
    const brief = await renderApp(backend);
    fireEvent.change(brief, { target: { value: "Add coupons to @shop/cart" } });
    fireEvent.click(screen.getByTestId("create-session"));

    await arrived("new-1");
    expect(await screen.findByTestId("message")).toHaveValue("Add coupons to @shop/cart");
    const error = within(screen.getByTestId("composer")).getByTestId("error");
    expect(error).toHaveTextContent("DRIVER_NOT_FOUND");
    expect(error).toHaveTextContent("claude is not installed");
    expect(screen.getByTestId("composer-note")).toHaveTextContent("first turn could not start");
  });

  it('does not call send_message when "Start the first turn now" is off, and prefills the composer', async () => {
    const backend = fakeBackend({ ...sessionHandlers(), send_message: () => created });
    const brief = await renderApp(backend);
    fireEvent.change(brief, { target: { value: "Add coupons to @shop/cart" } });
    fireEvent.click(screen.getByTestId("start-now"));
    expect(screen.getByTestId("start-now")).not.toBeChecked();
    fireEvent.click(screen.getByTestId("create-session"));

    await arrived("new-1");
    expect(await screen.findByTestId("message")).toHaveValue("Add coupons to @shop/cart");
    expect(flow(backend)).toEqual(["create_session"]);
    expect(within(screen.getByTestId("composer")).queryByTestId("error")).not.toBeInTheDocument();
  });

  it("stops at a refused file: the session opens with the error and the brief, nothing more is attached or sent", async () => {
    const handlers = sessionHandlers();
    const backend = fakeBackend({
      ...handlers,
      add_attachment: (args) => {
        if (args.name === "fake.pdf")
          throw { code: "ATTACHMENT_MISMATCH", message: "the content of `fake.pdf` is not a valid .pdf file" };
        return handlers.add_attachment(args);
      },
      send_message: () => created,
    });
    const brief = await renderApp(backend);
    fireEvent.change(brief, { target: { value: "Add coupons to @shop/cart" } });
    await userEvent.upload(screen.getByTestId("attach-input"), [
      new File(["a"], "a.txt", { type: "text/plain" }),
      new File(["not a pdf"], "fake.pdf", { type: "application/pdf" }),
      new File(["c"], "c.txt", { type: "text/plain" }),
    ]);
    fireEvent.click(screen.getByTestId("create-session"));

    await arrived("new-1");
    expect(flow(backend)).toEqual(["create_session", "add_attachment", "add_attachment"]);
    expect(await screen.findByTestId("message")).toHaveValue("Add coupons to @shop/cart");
    expect(within(screen.getByTestId("composer")).getByTestId("error")).toHaveTextContent("ATTACHMENT_MISMATCH");
    expect(screen.getByTestId("composer-note")).toHaveTextContent("fake.pdf was not attached");
    expect(
      screen.getAllByTestId("attachment-chip").map((c) => c.querySelector(".attachment-name")?.textContent),
    ).toEqual(["a.txt"]);
  });

  it("asks before an unknown id becomes a new module, and Create retries with createModules", async () => {
    const asked: unknown[] = [];
    const backend = fakeBackend({
      ...sessionHandlers(),
      create_session: (args: CreateSessionArgs) => {
        asked.push(args);
        if (!args.createModules) {
          throw {
            code: "MODULE_UNKNOWN",
            message:
              "`@shop/wishlist` is not a module of this workspace. Modules: `@shop/cart` (modules/cart). To create it as new, confirm `@shop/wishlist` (`createModules`); a new module's id matches `^@shop/[a-z]+$`.",
          };
        }
        return created;
      },
      send_message: () => created,
    });
    renderWithStore(<NewSession />, backend);
    fireEvent.change(await screen.findByTestId("brief"), { target: { value: "Add a wishlist in @shop/wishlist" } });
    fireEvent.click(screen.getByTestId("create-session"));

    const dialog = await screen.findByRole("dialog");
    expect(dialog).toHaveTextContent("Create new module @shop/wishlist?");
    expect(within(dialog).getByTestId("unknown-module")).toHaveTextContent("@shop/wishlist");
    // Nothing ran: no session, no turn, no raw error.
    expect(flow(backend)).toEqual(["create_session"]);
    expect(screen.queryByTestId("error")).not.toBeInTheDocument();

    // Cancel: back to the brief, nothing created.
    fireEvent.click(within(dialog).getByRole("button", { name: "Cancel" }));
    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    expect(flow(backend)).toEqual(["create_session"]);

    fireEvent.click(screen.getByTestId("create-session"));
    fireEvent.click(within(await screen.findByRole("dialog")).getByTestId("confirm"));
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("send_message", {
        sessionId: "new-1",
        text: "Add a wishlist in @shop/wishlist",
      }),
    );
    expect(asked.at(-1)).toEqual({ brief: "Add a wishlist in @shop/wishlist", createModules: ["@shop/wishlist"] });
    expect(flow(backend)).toEqual(["create_session", "create_session", "create_session", "send_message"]);
  });

  it("shows the agent and model that will run, with their health, and runs the first turn with a picked one", async () => {
    const settings = makeSettings({ openaiBaseUrl: "https://llm.example/v1", openaiModel: "gpt-4.1" });
    settings.drivers = [
      { id: "claude", available: true, detail: "/usr/local/bin/claude", version: null, signedIn: null },
      {
        id: "codex",
        available: false,
        detail: "`codex` was not found: install Codex with `npm install -g @openai/codex`",
        version: null,
        signedIn: null,
      },
      {
        id: "openai-compatible",
        available: true,
        detail: "gpt-4.1 at https://llm.example/v1",
        version: null,
        signedIn: false,
      },
    ];
    const backend = fakeBackend({ ...sessionHandlers(), get_settings: () => settings, send_message: () => created });
    renderWithStore(<NewSession />, backend);
    const health = await screen.findByTestId("agent-health");
    expect(screen.getByTestId("agent-driver")).toHaveValue("claude");
    expect(screen.getByRole("option", { name: "claude (default)" })).toBeInTheDocument();
    expect(health).toHaveAttribute("data-driver", "claude");
    expect(within(health).getByTestId("agent-installed")).toHaveTextContent("installed");
    expect(health).toHaveTextContent("/usr/local/bin/claude");
    // What the engine could not tell is said as unknown, not guessed.
    expect(within(health).getByTestId("agent-version")).toHaveTextContent("version unknown");
    expect(within(health).getByTestId("agent-signed-in")).toHaveTextContent("sign-in unknown");
    expect((screen.getByTestId("agent-model") as HTMLInputElement).placeholder).toBe("claude's default");

    fireEvent.change(screen.getByTestId("agent-driver"), { target: { value: "codex" } });
    expect(within(screen.getByTestId("agent-health")).getByTestId("agent-installed")).toHaveTextContent(
      "not installed",
    );
    expect(screen.getByTestId("agent-health")).toHaveTextContent("npm install -g @openai/codex");
    expect(screen.getByTestId("agent-unavailable")).toBeInTheDocument();

    fireEvent.change(screen.getByTestId("agent-driver"), { target: { value: "openai-compatible" } });
    expect(within(screen.getByTestId("agent-health")).getByTestId("agent-installed")).toHaveTextContent("configured");
    expect(within(screen.getByTestId("agent-health")).getByTestId("agent-signed-in")).toHaveTextContent("no key");
    expect((screen.getByTestId("agent-model") as HTMLInputElement).placeholder).toBe("gpt-4.1");
    fireEvent.change(screen.getByTestId("agent-model"), { target: { value: "gpt-4.1-mini" } });
    fireEvent.change(screen.getByTestId("brief"), { target: { value: "Faster @shop/cart" } });
    fireEvent.click(screen.getByTestId("create-session"));
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("send_message", {
        sessionId: "new-1",
        text: "Faster @shop/cart",
        driver: "openai-compatible",
        model: "gpt-4.1-mini",
      }),
    );
  });

  it("shows the agent's version and whether it is signed in, as the engine tells them", async () => {
    const settings = makeSettings();
    settings.drivers = [
      {
        id: "claude",
        available: true,
        detail: "/usr/local/bin/claude",
        version: "2.0.14 (Claude Code)",
        signedIn: true,
      },
      { id: "codex", available: true, detail: "/usr/local/bin/codex", version: "codex-cli 0.46.0", signedIn: false },
    ];
    renderWithStore(<NewSession />, fakeBackend({ get_settings: () => settings }));
    const health = await screen.findByTestId("agent-health");
    expect(within(health).getByTestId("agent-version")).toHaveTextContent(/^v2\.0\.14$/);
    expect(within(health).getByTestId("agent-version")).toHaveAttribute("title", "2.0.14 (Claude Code)");
    expect(within(health).getByTestId("agent-signed-in")).toHaveTextContent(/^signed in$/);
    expect(health).not.toHaveTextContent("unknown");

    fireEvent.change(screen.getByTestId("agent-driver"), { target: { value: "codex" } });
    const codex = screen.getByTestId("agent-health");
    expect(within(codex).getByTestId("agent-version")).toHaveTextContent(/^v0\.46\.0$/);
    expect(within(codex).getByTestId("agent-signed-in")).toHaveTextContent(/^not signed in$/);
  });

  it("completes a module after @ in the brief; Enter picks it and does not create", async () => {
    const backend = fakeBackend({ create_session: () => created });
    renderWithStore(<NewSession />, backend);
    const brief = (await screen.findByTestId("brief")) as HTMLTextAreaElement;
    const user = userEvent.setup();
    await user.click(brief);
    await user.type(brief, "Rate limits in @ap");
    expect(screen.getAllByTestId("module-option").map((o) => o.getAttribute("data-module"))).toEqual(["@shop/api"]);
    await user.keyboard("{Enter}");
    expect(brief.value).toBe("Rate limits in @shop/api ");
    await user.keyboard("{Control>}{Enter}{/Control}");
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("create_session", { brief: "Rate limits in @shop/api" }),
    );
  });
});

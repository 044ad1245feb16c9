// Tests for attachments in the session composer: upload as base64 with a chip, refusals inline, remove, paste and drop, the draft.
import { act, fireEvent, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { useState } from "react";
import { describe, expect, it } from "vitest";
import { KilnError } from "../../api/backend";
import type { AddAttachmentArgs, AttachmentView } from "../../api/types";
import { SessionScreen } from "../session/SessionScreen";
import { useStore } from "../../state/store";
import { fakeBackend, makeAttachment, makeSession } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";

const session = makeSession({ state: "editing" });

function attached(args: AddAttachmentArgs): AttachmentView {
  return makeAttachment({ id: `id-${args.name}`, name: args.name, kind: "file", size: atob(args.dataBase64).length });
}

describe("Composer attachments", () => {
  it("uploads a chosen file as base64 right away and shows its chip", async () => {
    const backend = fakeBackend({ get_session: () => session, get_transcript: () => [], add_attachment: attached });
    renderWithStore(<SessionScreen sessionId="s1" />, backend);

    const input = await screen.findByTestId("attach-input");
    expect(input).toHaveAttribute("accept", ".png,.jpg,.jpeg,.gif,.webp,.md,.txt,.json,.csv,.pdf,.svg");
    expect(input).toHaveAttribute("multiple");
    await userEvent.upload(input, new File(["hello"], "notes.txt", { type: "text/plain" }));

    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("add_attachment", {
        sessionId: "s1",
        name: "notes.txt",
        dataBase64: "aGVsbG8=",
      }),
    );
    const chip = await screen.findByTestId("attachment-chip");
    expect(chip).toHaveTextContent("notes.txt");
    expect(chip).toHaveTextContent("5 B");
    expect(screen.queryByTestId("attachment-uploading")).not.toBeInTheDocument();
  });

  it("shows an upload in progress on its chip and waits with Send until it is done", async () => {
    let finish: (a: AttachmentView) => void = () => {};
    const backend = fakeBackend({
      get_session: () => session,
      get_transcript: () => [],
      add_attachment: () => new Promise<AttachmentView>((resolve) => (finish = resolve)),
    });
    renderWithStore(<SessionScreen sessionId="s1" />, backend);
    fireEvent.change(await screen.findByTestId("message"), { target: { value: "Match the mock-up" } });
    await userEvent.upload(screen.getByTestId("attach-input"), new File(["x"], "mock.png", { type: "image/png" }));

    const uploading = await screen.findByTestId("attachment-uploading");
    expect(uploading).toHaveTextContent("mock.png");
    expect(screen.getByTestId("send")).toBeDisabled();
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("add_attachment", expect.objectContaining({ name: "mock.png" })),
    );
    act(() => finish(makeAttachment({ id: "a9", name: "mock.png", size: 1 })));

    expect(await screen.findByTestId("attachment-chip")).toHaveTextContent("mock.png");
    expect(screen.queryByTestId("attachment-uploading")).not.toBeInTheDocument();
    expect(screen.getByTestId("send")).toBeEnabled();
  });

  it("shows a refused upload's code and message inline and makes no chip", async () => {
    const backend = fakeBackend({
      get_session: () => session,
      get_transcript: () => [],
      add_attachment: () => {
        throw { code: "ATTACHMENT_MISMATCH", message: "the content of `shot.png` is not a valid .png file" };
      },
    });
    renderWithStore(<SessionScreen sessionId="s1" />, backend);
    await userEvent.upload(
      await screen.findByTestId("attach-input"),
      new File(["not a png"], "shot.png", { type: "image/png" }),
    );

    const refusal = await screen.findByTestId("attachment-error");
    expect(refusal).toHaveTextContent("ATTACHMENT_MISMATCH");
    expect(refusal).toHaveTextContent("is not a valid .png file");
    expect(refusal).toHaveTextContent("shot.png");
    expect(screen.queryByTestId("attachment-chip")).not.toBeInTheDocument();
    expect(screen.queryByTestId("attachment-uploading")).not.toBeInTheDocument();
  });

  it("refuses a too large or unaccepted file before uploading it", async () => {
    const backend = fakeBackend({ get_session: () => session, get_transcript: () => [], add_attachment: attached });
    renderWithStore(<SessionScreen sessionId="s1" />, backend);
    const big = new File(["x"], "huge.pdf", { type: "application/pdf" });
    Object.defineProperty(big, "size", { value: 5 * 1024 * 1024 + 1 });
    fireEvent.change(await screen.findByTestId("attach-input"), {
      target: { files: [big, new File(["MZ"], "tool.exe")] },
    });

    const refusals = await screen.findAllByTestId("attachment-error");
    expect(refusals.map((r) => r.querySelector(".error-code")?.textContent)).toEqual([
      "ATTACHMENT_TOO_LARGE",
      "ATTACHMENT_TYPE",
    ]);
    expect(backend.call).not.toHaveBeenCalledWith("add_attachment", expect.anything());
    expect(screen.queryByTestId("attachment-chip")).not.toBeInTheDocument();
  });

  it("lists the session's attachments and removes one with remove_attachment", async () => {
    const withTwo = makeSession({
      state: "editing",
      attachments: [
        makeAttachment({ id: "a1", name: "shot.png" }),
        makeAttachment({ id: "a2", name: "spec.md", kind: "file", size: 300 }),
      ],
    });
    const backend = fakeBackend({
      get_session: () => withTwo,
      get_transcript: () => [],
      remove_attachment: (args) => ({
        ...withTwo,
        attachments: withTwo.attachments.filter((a) => a.id !== args.attachmentId),
      }),
    });
    renderWithStore(<SessionScreen sessionId="s1" />, backend);

    const chips = await screen.findAllByTestId("attachment-chip");
    expect(chips.map((c) => c.textContent)).toEqual(["shot.png2 KB", "spec.md300 B"]);
    fireEvent.click(within(chips[0]).getByTestId("remove-attachment"));

    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("remove_attachment", { sessionId: "s1", attachmentId: "a1" }),
    );
    await waitFor(() => expect(screen.getAllByTestId("attachment-chip")).toHaveLength(1));
    expect(screen.getByTestId("attachment-chip")).toHaveTextContent("spec.md");
  });

  it("uploads files pasted into the message and dropped on the composer", async () => {
    const backend = fakeBackend({ get_session: () => session, get_transcript: () => [], add_attachment: attached });
    renderWithStore(<SessionScreen sessionId="s1" />, backend);
    const message = await screen.findByTestId("message");

    fireEvent.paste(message, {
      clipboardData: { files: [new File(["{}"], "data.json")], types: ["Files"], items: [] },
    });
    fireEvent.drop(screen.getByTestId("composer"), {
      dataTransfer: { files: [new File(["a,b"], "rows.csv")], types: ["Files"], items: [] },
    });

    await waitFor(() => expect(screen.getAllByTestId("attachment-chip")).toHaveLength(2));
    expect(backend.call).toHaveBeenCalledWith("add_attachment", {
      sessionId: "s1",
      name: "data.json",
      dataBase64: "e30=",
    });
    expect(backend.call).toHaveBeenCalledWith("add_attachment", {
      sessionId: "s1",
      name: "rows.csv",
      dataBase64: "YSxi",
    });
  });

  it("leaves a text paste to the textarea", async () => {
    const backend = fakeBackend({ get_session: () => session, get_transcript: () => [], add_attachment: attached });
    renderWithStore(<SessionScreen sessionId="s1" />, backend);
    const message = await screen.findByTestId("message");
    fireEvent.paste(message, {
      clipboardData: { files: [new File(["x"], "cells.png")], types: ["text/plain", "Files"], items: [] },
    });
    expect(backend.call).not.toHaveBeenCalledWith("add_attachment", expect.anything());
  });

  it("starts from the session's draft with its error, and clears the draft on send", async () => {
    const backend = fakeBackend({ get_session: () => session, get_transcript: () => [], send_message: () => session });
    function WithDraft() {
      const { dispatch, state } = useStore();
      const [open, setOpen] = useState(false);
      const setDraft = () => {
        const error = new KilnError("DRIVER_NOT_FOUND", "claude is not installed");
        dispatch({ type: "draftSet", sessionId: "s1", draft: { text: "The brief", error, note: "Waiting" } });
        setOpen(true);
      };
      return (
        <>
          <button type="button" onClick={setDraft}>
            set draft
          </button>
          <span data-testid="has-draft">{state.drafts.s1 ? "yes" : "no"}</span>
          {open && <SessionScreen sessionId="s1" />}
        </>
      );
    }
    renderWithStore(<WithDraft />, backend);
    fireEvent.click(screen.getByRole("button", { name: "set draft" }));

    expect(await screen.findByTestId("message")).toHaveValue("The brief");
    expect(screen.getByTestId("composer-note")).toHaveTextContent("Waiting");
    expect(screen.getByTestId("error")).toHaveTextContent("DRIVER_NOT_FOUND");
    fireEvent.click(screen.getByTestId("send"));
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith(
        "send_message",
        expect.objectContaining({ sessionId: "s1", text: "The brief" }),
      ),
    );
    await waitFor(() => expect(screen.getByTestId("has-draft")).toHaveTextContent("no"));
    expect(screen.getByTestId("message")).toHaveValue("");
    expect(screen.queryByTestId("error")).not.toBeInTheDocument();
    expect(screen.queryByTestId("composer-note")).not.toBeInTheDocument();
  });

  it("keeps unsent text as the session's draft when the composer goes away", async () => {
    const backend = fakeBackend({ get_session: () => session, get_transcript: () => [] });
    function Toggle() {
      const [open, setOpen] = useState(true);
      return (
        <>
          <button type="button" onClick={() => setOpen((o) => !o)}>
            toggle
          </button>
          {open && <SessionScreen sessionId="s1" />}
        </>
      );
    }
    renderWithStore(<Toggle />, backend);
    fireEvent.change(await screen.findByTestId("message"), { target: { value: "Half a thought" } });
    fireEvent.click(screen.getByRole("button", { name: "toggle" }));
    fireEvent.click(screen.getByRole("button", { name: "toggle" }));
    expect(await screen.findByTestId("message")).toHaveValue("Half a thought");
  });
});

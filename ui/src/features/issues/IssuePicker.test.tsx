// The "From a GitHub issue" picker: the open issues listed, a pick fills the field and shows the title, a pasted address is looked up (its title or the engine's refusal), and a refused list says why.
import { fireEvent, screen, waitFor } from "@testing-library/react";
import { useState } from "react";
import { describe, expect, it } from "vitest";
import type { GetIssueArgs, IssueSummary } from "../../api/types";
import { fakeBackend } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";
import { IssuePicker } from "./IssuePicker";

const open: IssueSummary[] = [
  {
    number: 12,
    title: "Cart forgets its total",
    author: "alice",
    labels: ["bug"],
    updatedAt: "2026-01-02T00:00:00Z",
    url: "https://github.com/acme/shop/issues/12",
  },
  {
    number: 7,
    title: "Show ratings",
    author: "bob",
    labels: [],
    updatedAt: "2026-01-01T00:00:00Z",
    url: "https://github.com/acme/shop/issues/7",
  },
];

function Harness() {
  const [value, setValue] = useState("");
  return (
    <>
      <IssuePicker value={value} onChange={setValue} />
      <output data-testid="value">{value}</output>
    </>
  );
}

describe("IssuePicker", () => {
  it("lists the open issues and a pick fills the field and shows the title", async () => {
    const backend = fakeBackend({ list_issues: () => open });
    renderWithStore(<Harness />, backend);
    const rows = await screen.findAllByTestId("issue-row");
    expect(rows.map((r) => r.textContent)).toEqual(["#12Cart forgets its totalbugalice", "#7Show ratingsbob"]);
    fireEvent.click(rows[1]);
    expect(screen.getByTestId("value")).toHaveTextContent("https://github.com/acme/shop/issues/7");
    expect(screen.getByTestId("issue-title")).toHaveTextContent("#7 Show ratings by bob");
    expect(rows[1]).toHaveAttribute("aria-pressed", "true");
    // A listed number is known without asking GitHub again.
    fireEvent.change(screen.getByTestId("issue-input"), { target: { value: "#12" } });
    expect(screen.getByTestId("issue-title")).toHaveTextContent("#12 Cart forgets its total");
    expect(backend.call.mock.calls.some((c) => c[0] === "get_issue")).toBe(false);
  });

  it("looks up a pasted address that is not listed, and shows a refusal", async () => {
    const backend = fakeBackend({
      list_issues: () => open,
      get_issue: (args: GetIssueArgs) => {
        if (args.issue.endsWith("/3")) return { ...open[0], number: 3, title: "Tracker issue", url: args.issue };
        throw { code: "ISSUE_NOT_FOUND", message: "there is no issue #404 in acme/shop" };
      },
    });
    renderWithStore(<Harness />, backend);
    await screen.findAllByTestId("issue-row");
    const input = screen.getByTestId("issue-input");
    fireEvent.change(input, { target: { value: "https://github.com/acme/tracker/issues/3" } });
    expect(await screen.findByTestId("issue-title", {}, { timeout: 3000 })).toHaveTextContent("#3 Tracker issue");
    expect(backend.call).toHaveBeenCalledWith("get_issue", { issue: "https://github.com/acme/tracker/issues/3" });

    fireEvent.change(input, { target: { value: "https://github.com/acme/shop/issues/404" } });
    const error = await screen.findByTestId("error", {}, { timeout: 3000 });
    expect(error).toHaveTextContent("ISSUE_NOT_FOUND");

    fireEvent.change(input, { target: { value: "the cart" } });
    expect(screen.getByText(/Paste an issue's address/)).toBeInTheDocument();
  });

  it("says why the list cannot be read", async () => {
    const backend = fakeBackend({
      list_issues: () => {
        throw { code: "TARGET_UNAVAILABLE", message: "no GitHub token is set" };
      },
    });
    renderWithStore(<Harness />, backend);
    const error = await screen.findByTestId("error");
    expect(error).toHaveTextContent("no GitHub token is set");
    await waitFor(() => expect(screen.queryByTestId("issue-list")).not.toBeInTheDocument());
  });
});

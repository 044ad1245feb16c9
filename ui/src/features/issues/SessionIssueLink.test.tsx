// The session header's issue link: none without an issue; owner/name#N pointing at the issue.
import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { SessionIssueLink } from "./SessionIssueLink";

describe("SessionIssueLink", () => {
  it("shows nothing for a session that did not start from an issue", () => {
    const { container } = render(<SessionIssueLink issue={null} />);
    expect(container).toBeEmptyDOMElement();
  });

  it("links to the issue by repository and number", () => {
    render(
      <SessionIssueLink issue={{ url: "https://github.com/acme/shop/issues/12", number: 12, repo: "acme/shop" }} />,
    );
    const link = screen.getByTestId("session-issue");
    expect(link).toHaveTextContent("acme/shop#12");
    expect(link).toHaveAttribute("href", "https://github.com/acme/shop/issues/12");
  });
});

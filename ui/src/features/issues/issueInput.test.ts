// readIssueInput and findListed: numbers, addresses, and what is neither.
import { describe, expect, it } from "vitest";
import type { IssueSummary } from "../../api/types";
import { findListed, readIssueInput, sameIssueUrl } from "./issueInput";

const listed: IssueSummary[] = [
  {
    number: 12,
    title: "Cart total",
    author: "alice",
    labels: [],
    updatedAt: "",
    url: "https://github.com/acme/shop/issues/12",
  },
  {
    number: 7,
    title: "Ratings",
    author: "bob",
    labels: ["ui"],
    updatedAt: "",
    url: "https://github.com/acme/shop/issues/7",
  },
];

describe("readIssueInput", () => {
  it("reads numbers and issue addresses", () => {
    expect(readIssueInput("12")).toEqual({ kind: "number", number: 12 });
    expect(readIssueInput(" #7 ")).toEqual({ kind: "number", number: 7 });
    expect(readIssueInput("https://github.com/acme/shop/issues/3")).toEqual({
      kind: "url",
      repo: "acme/shop",
      number: 3,
      url: "https://github.com/acme/shop/issues/3",
    });
  });

  it("takes nothing else", () => {
    for (const text of [
      "",
      "0",
      "fix the cart",
      "https://github.com/acme/shop/pull/3",
      "ftp://github.com/a/b/issues/1",
      "https://github.com/acme/shop/issues",
    ]) {
      expect(readIssueInput(text)).toBeNull();
    }
  });
});

describe("findListed", () => {
  it("finds a listed issue by number or address", () => {
    expect(findListed(readIssueInput("#7"), listed)?.title).toBe("Ratings");
    expect(findListed(readIssueInput("https://github.com/ACME/shop/issues/12/"), listed)?.title).toBe("Cart total");
    expect(findListed(readIssueInput("https://github.com/acme/other/issues/12"), listed)).toBeNull();
    expect(findListed(readIssueInput("99"), listed)).toBeNull();
    expect(findListed(null, listed)).toBeNull();
  });

  it("compares addresses without case, slash or fragment", () => {
    expect(sameIssueUrl("https://github.com/a/b/issues/1#issuecomment-2", "https://GitHub.com/a/b/issues/1/")).toBe(
      true,
    );
  });
});

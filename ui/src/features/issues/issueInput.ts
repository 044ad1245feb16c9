// What the "From a GitHub issue" field holds: an issue's address or a number, read the way the engine reads it (so the picker can tell which listed issue is meant, and whether there is anything to ask about yet).

import type { IssueSummary } from "../../api/types";

/** An issue address (`https://host/owner/name/issues/12`) or a number (`12`, `#12`). */
export type IssueInput =
  | { kind: "number"; number: number }
  | { kind: "url"; repo: string; number: number; url: string };

/** The input read, or null when it is neither an issue address nor a number (the engine says why). */
export function readIssueInput(text: string): IssueInput | null {
  const value = text.trim();
  const digits = /^#?(\d{1,15})$/.exec(value);
  if (digits) {
    const number = Number(digits[1]);
    return number > 0 ? { kind: "number", number } : null;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return null;
  const parts = /^\/([^/]+)\/([^/]+)\/issues\/(\d+)\/?$/.exec(url.pathname);
  if (!parts) return null;
  return { kind: "url", repo: `${parts[1]}/${parts[2]}`, number: Number(parts[3]), url: value };
}

/** The listed issue the input names: by number, or by its address. */
export function findListed(input: IssueInput | null, issues: readonly IssueSummary[] | null): IssueSummary | null {
  if (!input || !issues) return null;
  if (input.kind === "number") return issues.find((i) => i.number === input.number) ?? null;
  return issues.find((i) => sameIssueUrl(i.url, input.url)) ?? null;
}

/** Two issue addresses for the same issue (case of owner and name, a trailing slash or fragment aside). */
export function sameIssueUrl(a: string, b: string): boolean {
  const clean = (u: string) =>
    u
      .trim()
      .replace(/[#?].*$/, "")
      .replace(/\/$/, "")
      .toLowerCase();
  return clean(a) === clean(b);
}

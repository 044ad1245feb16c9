// Tests for the error words: every engine and transport code has words, and codes come out of a line of text.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TRANSPORT_ERROR_CODES } from "../api/backend";
import { ERROR_WORDS, errorWords, splitCodes } from "./errorWords";

/**
 * The codes of a Rust file's first `as_str` list (vitest runs in ui/), read from the source so a new code
 * cannot go without words.
 */
function codesIn(file: string): string[] {
  const source = readFileSync(join(process.cwd(), file), "utf8");
  const body = source.slice(source.indexOf("fn as_str"));
  return [...body.slice(0, body.indexOf("\n    }\n")).matchAll(/=> "([A-Z_]+)"/g)].map((m) => m[1]);
}

/** The engine's codes (error.rs) and the ones only kiln-serve's HTTP layer produces (serve's errors.rs). */
const engineCodes = (): string[] => codesIn("../src-tauri/types/src/error.rs");
const transportCodes = (): string[] => codesIn("../src-tauri/serve/src/errors.rs");

describe("errorWords", () => {
  it("has words for every code the engine and the server name", () => {
    const codes = [...engineCodes(), ...transportCodes()];
    expect(codes.length).toBeGreaterThan(40);
    expect(codes).toContain("DRIVER_NOT_FOUND");
    expect(codes).toContain("NOT_CONNECTED");
    expect(codes.filter((c) => !(c in ERROR_WORDS))).toEqual([]);
  });

  it("types exactly the server's transport codes", () => {
    expect([...TRANSPORT_ERROR_CODES].sort()).toEqual(transportCodes().sort());
  });

  it("reads known codes in words and unknown ones as a sentence", () => {
    expect(errorWords("DELIVERY_BLOCKED")).toBe("Delivery is blocked until the listed problems are fixed");
    expect(errorWords("SOMETHING_NEW")).toBe("Something new");
  });

  it("takes bracketed and backticked codes out of a line, leaving other code and capitals alone", () => {
    expect(splitCodes("The turn for your message could not start: no claude [DRIVER_NOT_FOUND]")).toEqual({
      text: "The turn for your message could not start: no claude",
      codes: ["DRIVER_NOT_FOUND"],
    });
    expect(splitCodes("Delivery refused `DELIVERY_BLOCKED`: fix `npm test` first")).toEqual({
      text: "Delivery refused: fix `npm test` first",
      codes: ["DELIVERY_BLOCKED"],
    });
    expect(splitCodes("set `API_KEY` in [NOT_A_CODE]")).toEqual({ text: "set `API_KEY` in [NOT_A_CODE]", codes: [] });
  });
});

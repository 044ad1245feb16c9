// describeUpdateError on the updater plugin's real refusals: the exact texts tests/updater.rs gets
// from tauri-plugin-updater for a build signed with another key, changed bytes, an empty or garbage
// signature, a signature of another version and one naming no version. The plugin's commands
// reject with that text.
import { describe, expect, it } from "vitest";
import { describeUpdateError } from "./updater";

const OTHER_KEY = "The signature was created with a different key than the one provided";
const TAMPERED = "The signature verification failed";
const UNSIGNED = "Invalid encoding in minisign data";
const NOT_BASE64 = "Invalid symbol 32, offset 4.";
const OTHER_VERSION =
  "The update was signed for version 0.2.0 but the update endpoint announced version 0.3.0. The endpoint response may have been tampered with to force installing a different release.";

const NO_VERSION =
  "The update signature does not specify the version it was signed for, which `requireSignedVersion` requires. Re-sign and re-publish this release, or disable `requireSignedVersion`.";

describe("describeUpdateError", () => {
  it.each([OTHER_KEY, TAMPERED, UNSIGNED, NOT_BASE64])("refuses a download the plugin refused: %s", (message) => {
    for (const error of [message, new Error(message)]) {
      const text = describeUpdateError(error, "install");
      expect(text).toMatch(
        /^The update was refused: its signature does not match Kiln's release key, so it was not installed\./,
      );
      expect(text).toContain(`(${message})`);
    }
  });

  it("says a signature of another version is refused, without blaming the key", () => {
    const text = describeUpdateError(OTHER_VERSION, "install");
    expect(text).toMatch(/^The update was refused: it is signed for another version than the one offered/);
    expect(text).not.toContain("release key");
  });

  it("says a signature bound to no version is refused (requireSignedVersion)", () => {
    const text = describeUpdateError(new Error(NO_VERSION), "install");
    expect(text).toMatch(/^The update was refused: its signature is not bound to a version, so it was not installed\./);
    expect(text).not.toContain("release key");
  });

  it("leaves other failures as they are", () => {
    expect(describeUpdateError("Failed to install .deb package", "install")).toBe(
      "The update could not be installed: Failed to install .deb package",
    );
    expect(describeUpdateError(new Error("error sending request"), "check")).toBe(
      "Could not check for updates: error sending request",
    );
    // A check verifies nothing: a latest.json without a signature field is a broken manifest.
    expect(describeUpdateError("the `signature` field was not set on the updater response", "check")).toBe(
      "Could not check for updates: the `signature` field was not set on the updater response",
    );
  });
});

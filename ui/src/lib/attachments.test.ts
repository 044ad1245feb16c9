// Tests for the client-side attachment checks (engine order and codes), names, sizes and base64 reading.
import { describe, expect, it } from "vitest";
import { extensionOf, formatBytes, kindOf, MAX_ATTACHMENT_BYTES, nameOf, precheck, readBase64 } from "./attachments";

describe("attachments", () => {
  it("reads the extension the engine would store", () => {
    expect(extensionOf("Shot.PNG")).toBe("png");
    expect(extensionOf("C:\\Users\\me\\notes.md")).toBe("md");
    expect(extensionOf("photo.png ")).toBe("png");
    expect(extensionOf(".png")).toBe("");
    expect(extensionOf("README")).toBe("");
    expect(kindOf("a.svg")).toBe("image");
    expect(kindOf("a.pdf")).toBe("file");
  });

  it("refuses like the engine: count, then type, emptiness, size", () => {
    expect(precheck("a.png", 10, 10)?.code).toBe("ATTACHMENT_LIMIT");
    expect(precheck("tool.exe", 10, 0)?.code).toBe("ATTACHMENT_TYPE");
    expect(precheck("tool.exe", 0, 0)?.code).toBe("ATTACHMENT_TYPE");
    expect(precheck("empty.txt", 0, 0)?.code).toBe("ATTACHMENT_EMPTY");
    expect(precheck("big.pdf", MAX_ATTACHMENT_BYTES + 1, 0)?.code).toBe("ATTACHMENT_TOO_LARGE");
    expect(precheck("ok.pdf", MAX_ATTACHMENT_BYTES, 9)).toBeNull();
  });

  it("names a pasted image that has no name by its type", () => {
    expect(nameOf(new File(["x"], "", { type: "image/png" }))).toBe("pasted.png");
    expect(nameOf(new File(["x"], "mine.jpg", { type: "image/jpeg" }))).toBe("mine.jpg");
  });

  it("formats sizes in binary units", () => {
    expect(formatBytes(512)).toBe("512 B");
    expect(formatBytes(2048)).toBe("2 KB");
    expect(formatBytes(12_600)).toBe("12.3 KB");
    expect(formatBytes(5 * 1024 * 1024)).toBe("5 MB");
  });

  it("reads a file as plain base64", async () => {
    expect(await readBase64(new File(["hello"], "a.txt"))).toBe("aGVsbG8=");
    expect(await readBase64(new File([new Uint8Array([0x89, 0x50, 0x4e, 0x47])], "a.png", { type: "image/png" }))).toBe(
      "iVBORw==",
    );
  });
});

// Attachment rules mirrored from the engine (count, size, extensions) for fast client-side refusals, plus file reading.
import { KilnError } from "../api/backend";

/** The engine's limits (engine/src/attachments.rs); the engine stays the authority. */
export const MAX_ATTACHMENTS = 10;
export const MAX_ATTACHMENT_BYTES = 5 * 1024 * 1024;
export const ATTACHMENT_EXTENSIONS = [
  "png",
  "jpg",
  "jpeg",
  "gif",
  "webp",
  "md",
  "txt",
  "json",
  "csv",
  "pdf",
  "svg",
] as const;
/** The `accept` attribute of the file inputs. */
export const ATTACHMENT_ACCEPT = ATTACHMENT_EXTENSIONS.map((e) => `.${e}`).join(",");

/** A file on its way to the engine, as its chip shows it. */
export interface UploadItem {
  key: string;
  name: string;
  size: number;
}

/** A file that was not attached, or an attachment that could not be removed, and why. */
export interface Refusal {
  key: string;
  name: string;
  error: KilnError;
}

const IMAGE_EXTENSIONS: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
  "image/svg+xml": "svg",
};

/**
 * The lowercase extension of the name the engine would store (last path segment, characters
 * outside `[A-Za-z0-9._-]` as `-`, leading and trailing `.`/`-` stripped), or "".
 */
export function extensionOf(name: string): string {
  const base = (name.split(/[/\\]/).pop() ?? "")
    .replace(/[^A-Za-z0-9._-]/g, "-")
    .replace(/-+/g, "-")
    .replace(/\.+/g, ".")
    .replace(/^[.-]+|[.-]+$/g, "");
  const dot = base.lastIndexOf(".");
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : "";
}

/** "image" or "file", as the engine classes an attachment by its extension. */
export function kindOf(name: string): "image" | "file" {
  return ["png", "jpg", "jpeg", "gif", "webp", "svg"].includes(extensionOf(name)) ? "image" : "file";
}

/** A file's name, or one made from its type when it has none (a pasted screenshot). */
export function nameOf(file: File): string {
  if (file.name) return file.name;
  const ext = IMAGE_EXTENSIONS[file.type] ?? (file.type === "text/plain" ? "txt" : "");
  return ext ? `pasted.${ext}` : "pasted";
}

/**
 * Why the engine would refuse this file, checked in the engine's order (count, type, emptiness,
 * size), or null when it may be sent. `held` is how many the session holds or has on the way.
 */
export function precheck(name: string, size: number, held: number): KilnError | null {
  if (held >= MAX_ATTACHMENTS) {
    return new KilnError(
      "ATTACHMENT_LIMIT",
      `a session holds at most ${MAX_ATTACHMENTS} attachments; remove one to add another`,
    );
  }
  const ext = extensionOf(name);
  if (!(ATTACHMENT_EXTENSIONS as readonly string[]).includes(ext)) {
    return new KilnError(
      "ATTACHMENT_TYPE",
      `\`${name}\` is not a type Kiln accepts; attach one of: ${ATTACHMENT_EXTENSIONS.join(", ")}`,
    );
  }
  if (size === 0) return new KilnError("ATTACHMENT_EMPTY", `\`${name}\` is empty`);
  if (size > MAX_ATTACHMENT_BYTES) {
    return new KilnError("ATTACHMENT_TOO_LARGE", `\`${name}\` is ${formatBytes(size)}; an attachment is at most 5 MB`);
  }
  return null;
}

/** "512 B", "12.3 KB", "4.5 MB" (binary units, as the 5 MB limit is). */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n) || n < 0) return "0 B";
  if (n < 1024) return `${Math.round(n)} B`;
  const kb = n / 1024;
  if (kb < 1024) return `${trim(kb.toFixed(1))} KB`;
  return `${trim((kb / 1024).toFixed(1))} MB`;
}

function trim(fixed: string): string {
  return fixed.endsWith(".0") ? fixed.slice(0, -2) : fixed;
}

/** The file's bytes as standard base64 (no data: prefix). */
export function readBase64(file: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => {
      const url = typeof reader.result === "string" ? reader.result : "";
      resolve(url.slice(url.indexOf(",") + 1));
    };
    reader.onerror = () =>
      reject(new KilnError("INVALID_INPUT", `Could not read the file: ${reader.error?.message ?? "unknown error"}`));
    reader.readAsDataURL(file);
  });
}

/** The files in a clipboard or drag payload (none when it holds only text). */
export function filesOf(data: DataTransfer | null): File[] {
  if (!data) return [];
  if (data.files && data.files.length > 0) return Array.from(data.files);
  const files: File[] = [];
  for (const item of Array.from(data.items ?? [])) {
    if (item.kind !== "file") continue;
    const file = item.getAsFile();
    if (file) files.push(file);
  }
  return files;
}

/** Whether a drag carries files (its types list "Files"), so the drop target can light up. */
export function dragHasFiles(data: DataTransfer | null): boolean {
  return !!data && Array.from(data.types ?? []).includes("Files");
}

// Drag-and-drop of files onto an element, and paste of files into a text field, handing the files to a callback.
import { type ClipboardEvent, type DragEvent, useRef, useState } from "react";
import { dragHasFiles, filesOf } from "./attachments";

export interface FileDrop {
  /** True while files are dragged over the element. */
  dragging: boolean;
  dropProps: {
    onDragEnter: (e: DragEvent) => void;
    onDragOver: (e: DragEvent) => void;
    onDragLeave: (e: DragEvent) => void;
    onDrop: (e: DragEvent) => void;
  };
}

/** Handlers for an element that accepts dropped files (ignored while `disabled`). */
export function useFileDrop(onFiles: (files: File[]) => void, disabled = false): FileDrop {
  const [dragging, setDragging] = useState(false);
  // dragenter/dragleave fire for every child crossed: count them so leaving a child does not end the drag.
  const depth = useRef(0);

  const accepts = (e: DragEvent) => !disabled && dragHasFiles(e.dataTransfer);
  return {
    dragging: dragging && !disabled,
    dropProps: {
      onDragEnter: (e) => {
        if (!accepts(e)) return;
        e.preventDefault();
        depth.current += 1;
        setDragging(true);
      },
      onDragOver: (e) => {
        if (!accepts(e)) return;
        e.preventDefault();
        e.dataTransfer.dropEffect = "copy";
      },
      onDragLeave: () => {
        depth.current = Math.max(0, depth.current - 1);
        if (depth.current === 0) setDragging(false);
      },
      onDrop: (e) => {
        depth.current = 0;
        setDragging(false);
        const files = filesOf(e.dataTransfer);
        if (disabled || files.length === 0) return;
        e.preventDefault();
        onFiles(files);
      },
    },
  };
}

/**
 * A paste handler for a text field: pasted files (a screenshot, a copied image) go to `onFiles`.
 * When the clipboard also holds plain text it is a text paste (a spreadsheet's cells come with a
 * picture of them), left to the browser.
 */
export function pasteFiles(e: ClipboardEvent, onFiles: (files: File[]) => void): void {
  const data = e.clipboardData;
  if (!data || Array.from(data.types ?? []).includes("text/plain")) return;
  const files = filesOf(data);
  if (files.length === 0) return;
  e.preventDefault();
  onFiles(files);
}

// Lets xterm's DOM renderer draw under Kiln's Content-Security-Policy (`style-src 'self'`, the desktop's and kiln serve's): the policy refuses the <style> elements xterm writes its font, theme and cell size into, and the style attributes it gives truecolour text. Without this the terminal draws in the page's default serif font, uncoloured. Constructed stylesheets and CSSOM writes are outside the policy, so each refused style is applied again that way.

/** What this needs from the page; absent in an old webview (the terminal then draws uncoloured). */
function supported(doc: Document): boolean {
  return (
    "adoptedStyleSheets" in doc && typeof CSSStyleSheet !== "undefined" && "replaceSync" in CSSStyleSheet.prototype
  );
}

/** An element the policy refused a style attribute: the attribute is there, the declaration it should make is empty. */
function reapply(node: Node) {
  if (node.nodeType !== Node.ELEMENT_NODE) return;
  const element = node as HTMLElement;
  const attribute = element.getAttribute("style");
  // Written through CSSOM, the attribute then matches and the next look finds a declaration.
  if (attribute && element.style && element.style.length === 0) element.style.cssText = attribute;
}

/**
 * Watches `root` (the terminal's host) until the answer is called: every <style> element in it is
 * mirrored into a constructed stylesheet adopted by the document, and every refused style attribute
 * is written again through CSSOM. Where the policy allows inline styles this changes nothing.
 */
export function applyRefusedStyles(root: HTMLElement): () => void {
  const doc = root.ownerDocument;
  if (!supported(doc)) return () => {};
  const sheets = new Map<HTMLStyleElement, { sheet: CSSStyleSheet; text: string }>();

  const syncSheets = () => {
    for (const element of root.querySelectorAll("style")) {
      let held = sheets.get(element);
      if (!held) {
        held = { sheet: new CSSStyleSheet(), text: "" };
        sheets.set(element, held);
        doc.adoptedStyleSheets = [...doc.adoptedStyleSheets, held.sheet];
      }
      const text = element.textContent ?? "";
      if (text !== held.text) {
        held.text = text;
        held.sheet.replaceSync(text);
      }
    }
  };

  const observer = new MutationObserver((records) => {
    let styles = false;
    for (const record of records) {
      const target = record.target;
      if (target.nodeName === "STYLE" || target.parentNode?.nodeName === "STYLE") styles = true;
      if (record.type === "attributes") reapply(target);
      for (const added of record.addedNodes) {
        if (added.nodeName === "STYLE") styles = true;
        reapply(added);
        // A row arrives with its spans already styled.
        if (added.nodeType === Node.ELEMENT_NODE)
          for (const inner of (added as Element).querySelectorAll("[style]")) reapply(inner);
      }
    }
    if (styles) syncSheets();
  });
  observer.observe(root, {
    subtree: true,
    childList: true,
    characterData: true,
    attributes: true,
    attributeFilter: ["style"],
  });
  syncSheets();
  for (const element of root.querySelectorAll("[style]")) reapply(element);

  return () => {
    observer.disconnect();
    const mine = new Set([...sheets.values()].map((h) => h.sheet));
    doc.adoptedStyleSheets = doc.adoptedStyleSheets.filter((s) => !mine.has(s));
  };
}

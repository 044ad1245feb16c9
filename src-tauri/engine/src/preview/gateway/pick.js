// Kiln's picking script: served only by the preview gateway (/__kiln/pick.js) and added to
// the HTML documents it forwards, never written into the working copy. It does nothing
// until Kiln's view (the parent frame) asks: {kiln: "pick", mode: "element" | "region" | "cancel"}.
// It answers the parent with {kiln: "picked", ...} or {kiln: "pick-cancelled"}.
(function () {
  "use strict";
  if (window.__kilnPick || window.parent === window) return;
  window.__kilnPick = true;

  var HTML_LIMIT = 4000;
  var STYLES = [
    "color", "background-color", "font-family", "font-size", "font-weight", "width", "height",
    "margin", "padding", "display", "position", "border",
  ];
  var Z = "2147483647";
  var mode = null;
  var parts = [];
  var listeners = [];

  // Kiln's origin when the browser says it; the answer names nothing secret either way.
  function parentOrigin() {
    var a = window.location.ancestorOrigins;
    return a && a.length && a[0] !== "null" ? a[0] : "*";
  }
  function tell(message) {
    message.kiln = message.kiln || "picked";
    window.parent.postMessage(message, parentOrigin());
  }
  function box(style) {
    var el = document.createElement("div");
    el.setAttribute("data-kiln-pick", "");
    var s = el.style;
    s.position = "fixed";
    s.zIndex = Z;
    s.boxSizing = "border-box";
    for (var k in style) s[k] = style[k];
    (document.body || document.documentElement).appendChild(el);
    parts.push(el);
    return el;
  }
  function on(target, type, fn) {
    target.addEventListener(type, fn, true);
    listeners.push([target, type, fn]);
  }
  function stop() {
    mode = null;
    parts.forEach(function (el) { el.remove(); });
    parts = [];
    listeners.forEach(function (l) { l[0].removeEventListener(l[1], l[2], true); });
    listeners = [];
  }
  function swallow(e) {
    e.preventDefault();
    e.stopImmediatePropagation();
  }
  // The width the page lays out in (without a scrollbar): screenshots are taken without one.
  function viewport() {
    return { width: document.documentElement.clientWidth || window.innerWidth, height: window.innerHeight };
  }
  function page() {
    return window.location.pathname + window.location.search;
  }
  function cancel() {
    stop();
    tell({ kiln: "pick-cancelled" });
  }

  function unique(selector, el) {
    try {
      var all = document.querySelectorAll(selector);
      return all.length === 1 && all[0] === el;
    } catch (_) {
      return false;
    }
  }
  // The element's id when it is unique, else the shortest tag:nth-of-type path that is.
  function selectorOf(el) {
    var path = [];
    for (var at = el; at && at.nodeType === 1; at = at.parentElement) {
      if (at.id) {
        var id = "#" + CSS.escape(at.id);
        if (unique(id, at)) {
          path.unshift(id);
          return path.join(" > ");
        }
      }
      var tag = at.localName;
      var same = at.parentElement
        ? Array.prototype.filter.call(at.parentElement.children, function (c) { return c.localName === tag; })
        : [at];
      path.unshift(same.length > 1 ? tag + ":nth-of-type(" + (same.indexOf(at) + 1) + ")" : tag);
      var selector = path.join(" > ");
      if (unique(selector, el)) return selector;
    }
    return path.join(" > ");
  }
  function stylesOf(el) {
    var computed = window.getComputedStyle(el);
    var out = {};
    STYLES.forEach(function (name) {
      var value = computed.getPropertyValue(name);
      if (value) out[name] = value;
    });
    return out;
  }
  function rectOf(el) {
    var r = el.getBoundingClientRect();
    return { x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: r.height };
  }

  function pickElement() {
    var outline = box({
      pointerEvents: "none", border: "2px solid #e8590c", background: "rgba(232, 89, 12, 0.12)", display: "none",
    });
    var under = function (e) {
      var el = document.elementFromPoint(e.clientX, e.clientY);
      return el && !el.hasAttribute("data-kiln-pick") ? el : null;
    };
    on(window, "mousemove", function (e) {
      var el = under(e);
      if (!el) return;
      var r = el.getBoundingClientRect();
      var s = outline.style;
      s.display = "block";
      s.left = r.left + "px";
      s.top = r.top + "px";
      s.width = r.width + "px";
      s.height = r.height + "px";
    });
    // The application never sees the press that picks.
    ["pointerdown", "pointerup", "mousedown", "mouseup", "dblclick", "auxclick", "contextmenu"].forEach(function (t) {
      on(window, t, swallow);
    });
    on(window, "click", function (e) {
      swallow(e);
      var el = under(e);
      if (!el) return;
      var html = el.outerHTML.trim();
      var cut = html.length > HTML_LIMIT;
      var answer = {
        kind: "element",
        selector: selectorOf(el),
        html: cut ? html.slice(0, HTML_LIMIT) : html,
        htmlCut: cut,
        styles: stylesOf(el),
        rect: rectOf(el),
        viewport: viewport(),
        path: page(),
      };
      stop();
      tell(answer);
    });
  }

  function pickRegion() {
    var cover = box({ left: "0", top: "0", width: "100vw", height: "100vh", cursor: "crosshair" });
    var drawn = box({ pointerEvents: "none", border: "2px dashed #e8590c", background: "rgba(232, 89, 12, 0.12)" });
    drawn.style.display = "none";
    var from = null;
    var rectTo = function (e) {
      return {
        left: Math.min(from.x, e.clientX), top: Math.min(from.y, e.clientY),
        width: Math.abs(e.clientX - from.x), height: Math.abs(e.clientY - from.y),
      };
    };
    on(cover, "mousedown", function (e) {
      swallow(e);
      from = { x: e.clientX, y: e.clientY };
    });
    on(window, "mousemove", function (e) {
      if (!from) return;
      var r = rectTo(e);
      var s = drawn.style;
      s.display = "block";
      s.left = r.left + "px";
      s.top = r.top + "px";
      s.width = r.width + "px";
      s.height = r.height + "px";
    });
    on(window, "mouseup", function (e) {
      if (!from) return;
      swallow(e);
      var r = rectTo(e);
      from = null;
      // A click without a drag is no region.
      if (r.width < 4 || r.height < 4) {
        drawn.style.display = "none";
        return;
      }
      stop();
      tell({
        kind: "region",
        rect: { x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: r.height },
        viewport: viewport(),
        path: page(),
      });
    });
    on(window, "click", swallow);
  }

  window.addEventListener("message", function (e) {
    if (e.source !== window.parent || !e.data || e.data.kiln !== "pick") return;
    stop();
    if (e.data.mode === "element" || e.data.mode === "region") {
      mode = e.data.mode;
      on(window, "keydown", function (k) {
        if (k.key === "Escape") {
          swallow(k);
          cancel();
        }
      });
      if (mode === "element") pickElement();
      else pickRegion();
    }
  });
})();

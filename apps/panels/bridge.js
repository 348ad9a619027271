// The app side of the MCP Apps protocol (2026-01-26), written by hand so the panels need no build step.
// This file is inlined at the top of each panel's module script; the panel's own code follows it in the
// same element, so everything here is defined at module top level rather than exported.

const BRIDGE_PROTOCOL = "2026-01-26";
const BRIDGE_TIMEOUT_MS = 60000;

const bridge = {
  hostContext: {},
  hostCapabilities: {},
  toolInput: null,
  toolResult: null,
  ready: false,
  _nextId: 1,
  _pending: new Map(),
  _handlers: { toolInput: [], toolResult: [], cancelled: [], context: [], teardown: [] },
  _appName: "zotero-mcp",
  _lastSize: "",
};

function bridgeSend(message) {
  window.parent.postMessage(Object.assign({ jsonrpc: "2.0" }, message), "*");
}

// A request the host answers; rejects on an error reply or when the host stays silent past the timeout.
function bridgeRequest(method, params, timeoutMs) {
  const id = bridge._nextId++;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      bridge._pending.delete(id);
      reject(new Error("The host did not answer " + method + " in time."));
    }, timeoutMs || BRIDGE_TIMEOUT_MS);
    bridge._pending.set(id, { resolve, reject, timer });
    bridgeSend({ id, method, params: params || {} });
  });
}

function bridgeNotify(method, params) {
  bridgeSend({ method, params: params || {} });
}

function bridgeOn(event, fn) {
  bridge._handlers[event].push(fn);
  // A panel that subscribes late still sees what already arrived.
  if (event === "toolInput" && bridge.toolInput) fn(bridge.toolInput);
  if (event === "toolResult" && bridge.toolResult) fn(bridge.toolResult);
}

function bridgeEmit(event, value) {
  for (const fn of bridge._handlers[event]) {
    try {
      fn(value);
    } catch (err) {
      console.error("[zotero-mcp panel]", err);
    }
  }
}

function bridgeApplyContext(ctx) {
  if (!ctx || typeof ctx !== "object") return;
  bridge.hostContext = Object.assign({}, bridge.hostContext, ctx);
  const root = document.documentElement;
  if (ctx.theme === "light" || ctx.theme === "dark") {
    root.setAttribute("data-theme", ctx.theme);
    root.style.colorScheme = ctx.theme;
  }
  const vars = ctx.styles && ctx.styles.variables;
  if (vars && typeof vars === "object") {
    for (const [name, value] of Object.entries(vars)) {
      if (typeof value === "string" && name.startsWith("--")) root.style.setProperty(name, value);
    }
  }
  const fonts = ctx.styles && ctx.styles.css && ctx.styles.css.fonts;
  if (typeof fonts === "string" && !document.getElementById("host-fonts")) {
    const style = document.createElement("style");
    style.id = "host-fonts";
    style.textContent = fonts;
    document.head.appendChild(style);
  }
  if (typeof ctx.locale === "string") root.lang = ctx.locale;
  bridgeEmit("context", bridge.hostContext);
}

function bridgeHandleRequest(msg) {
  if (msg.method === "ui/resource-teardown") {
    bridgeEmit("teardown", msg.params);
    bridgeSend({ id: msg.id, result: {} });
  } else if (msg.method === "ping") {
    bridgeSend({ id: msg.id, result: {} });
  } else {
    bridgeSend({ id: msg.id, error: { code: -32601, message: "Method not found: " + msg.method } });
  }
}

function bridgeHandleNotification(msg) {
  const params = msg.params || {};
  switch (msg.method) {
    case "ui/notifications/tool-input":
      bridge.toolInput = params.arguments || {};
      bridgeEmit("toolInput", bridge.toolInput);
      break;
    case "ui/notifications/tool-result":
      bridge.toolResult = params;
      bridgeEmit("toolResult", params);
      break;
    case "ui/notifications/tool-cancelled":
      bridgeEmit("cancelled", params.reason || "");
      break;
    case "ui/notifications/host-context-changed":
      bridgeApplyContext(params);
      break;
    default:
      break;
  }
}

window.addEventListener("message", (event) => {
  // Only the host that embeds us speaks this protocol; anything else is ignored.
  if (event.source !== window.parent) return;
  const msg = event.data;
  if (!msg || typeof msg !== "object" || msg.jsonrpc !== "2.0") return;
  if (msg.method === undefined && msg.id !== undefined) {
    const pending = bridge._pending.get(msg.id);
    if (!pending) return;
    bridge._pending.delete(msg.id);
    clearTimeout(pending.timer);
    if (msg.error) pending.reject(new Error(msg.error.message || "The host refused the request."));
    else pending.resolve(msg.result);
  } else if (typeof msg.method === "string") {
    if (msg.id !== undefined && msg.id !== null) bridgeHandleRequest(msg);
    else bridgeHandleNotification(msg);
  }
});

function bridgeReportSize() {
  const root = document.documentElement;
  const saved = root.style.height;
  root.style.height = "max-content";
  const height = Math.ceil(root.getBoundingClientRect().height);
  root.style.height = saved;
  const width = Math.ceil(window.innerWidth);
  const key = width + "x" + height;
  if (key === bridge._lastSize) return;
  bridge._lastSize = key;
  bridgeNotify("ui/notifications/size-changed", { width, height });
}

// Handshake: ui/initialize, apply the host context, then say we are initialized.
async function bridgeStart(panelName) {
  bridge._appName = "zotero-mcp " + panelName;
  try {
    const result = await bridgeRequest("ui/initialize", {
      appInfo: { name: bridge._appName, version: "1" },
      appCapabilities: {},
      protocolVersion: BRIDGE_PROTOCOL,
    }, 15000);
    bridge.hostCapabilities = (result && result.hostCapabilities) || {};
    bridgeApplyContext((result && result.hostContext) || {});
  } catch (err) {
    console.warn("[zotero-mcp panel] initialize failed:", err.message);
  }
  bridgeNotify("ui/notifications/initialized", {});
  bridge.ready = true;
  let queued = false;
  const observer = new ResizeObserver(() => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      bridgeReportSize();
    });
  });
  observer.observe(document.documentElement);
  observer.observe(document.body);
  bridgeReportSize();
  return bridge.hostContext;
}

// tools/call through the host. `extra` adds top-level params (the review panel's inputResponses).
function bridgeCallTool(name, args, extra) {
  const params = Object.assign({ name, arguments: args || {} }, extra || {});
  return bridgeRequest("tools/call", params, 120000);
}

function bridgeOpenLink(url) {
  return bridgeRequest("ui/open-link", { url });
}

function bridgeUpdateModelContext(text, structured) {
  const params = { content: [{ type: "text", text }] };
  if (structured) params.structuredContent = structured;
  return bridgeRequest("ui/update-model-context", params).catch((err) => {
    console.warn("[zotero-mcp panel] update-model-context failed:", err.message);
  });
}

// ---- small helpers shared by the panels ----

function locale() {
  const l = bridge.hostContext.locale;
  return typeof l === "string" && l ? l : undefined;
}

function fmtNumber(n) {
  try {
    return new Intl.NumberFormat(locale()).format(n);
  } catch (_) {
    return String(n);
  }
}

function fmtDateTime(value) {
  const d = new Date(value);
  if (isNaN(d.getTime())) return String(value);
  try {
    return new Intl.DateTimeFormat(locale(), { dateStyle: "medium", timeStyle: "short" }).format(d);
  } catch (_) {
    return d.toISOString();
  }
}

// Builds an element; strings become text nodes, never markup.
function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.appendChild(typeof child === "string" || typeof child === "number" ? document.createTextNode(String(child)) : child);
  }
  return node;
}

function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
}

function resultText(result) {
  const parts = ((result && result.content) || []).filter((c) => c && c.type === "text").map((c) => c.text);
  return parts.join("\n").trim();
}

// Previous / next controls for a paged list (panels paginate rather than scroll).
function pager(page, pages, onGo, prefix, noun) {
  const label = h("span", {
    "data-testid": prefix + "-page",
    "aria-live": "polite",
    text: (noun || "Page") + " " + fmtNumber(page + 1) + " of " + fmtNumber(pages),
  });
  return h("div", { class: "pager" },
    h("button", {
      type: "button", "data-testid": prefix + "-prev", "aria-label": "Previous " + (noun || "page").toLowerCase(),
      disabled: page <= 0, onclick: () => onGo(page - 1),
    }, "‹ Previous"),
    label,
    h("button", {
      type: "button", "data-testid": prefix + "-next", "aria-label": "Next " + (noun || "page").toLowerCase(),
      disabled: page >= pages - 1, onclick: () => onGo(page + 1),
    }, "Next ›"));
}

// Arrow keys move a paged view when focus is not in a text field.
function onArrowKeys(prev, next) {
  document.addEventListener("keydown", (event) => {
    const t = event.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.isContentEditable)) return;
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.key === "ArrowLeft" || event.key === "PageUp") {
      event.preventDefault();
      prev();
    } else if (event.key === "ArrowRight" || event.key === "PageDown") {
      event.preventDefault();
      next();
    }
  });
}

// Review panel: the person approves or declines a change a confirming tool asks about, or sees what a
// small change did (a receipt).

const REVIEW_META = "io.github.zotero-mcp/review";
const ANSWER_META = "io.github.zotero-mcp/answer";
const LIST_PAGE = 5;
const RECEIPT_PAGE = 9;

const TOOL_WORDS = {
  zotero_delete_items: "Delete items",
  zotero_manage_collections: "Change collections",
  zotero_find_duplicates: "Merge duplicate items",
  zotero_rename_attachments: "Rename attachment files",
  zotero_update_item: "Edit items",
  zotero_delete_attachment: "Delete an attachment",
  zotero_put_attachment: "Replace an attachment's file",
  zotero_undo: "Undo an earlier change",
  zotero_export_link: "Change an export link",
};

const rv = {
  tool: "",
  review: null,
  listPage: 0,
  receipt: null, // { lines, page }
  outcome: null, // { kind, text }
  busy: false,
  answered: false,
  changedNotice: false,
};

const app = document.getElementById("app");

function toolWords(name) {
  return TOOL_WORDS[name] || (name ? name.replace(/^zotero_/, "").replace(/_/g, " ") : "Change the library");
}

function reviewOf(result) {
  const rec = result && result._meta && result._meta[REVIEW_META];
  if (!rec || typeof rec !== "object" || typeof rec.requestState !== "string") return null;
  return rec;
}

// The summary is the form's text: a first line, then "- …" lines naming the first ten objects and counting the
// rest. When the record also lists every object (`items`), those are shown instead, and the summary's other
// sentences stay beside the heading.
function parseSummary(summary, every) {
  const lines = String(summary || "").split("\n").map((l) => l.trim()).filter(Boolean);
  const heading = lines.length ? lines[0] : "Approve this change?";
  if (Array.isArray(every) && every.length) {
    const prose = lines.slice(1).filter((l) => !/^[-•]\s/.test(l));
    return { heading, note: prose.join(" "), items: every.map(String) };
  }
  const items = lines.slice(1).map((l) => l.replace(/^[-•]\s*/, ""));
  return { heading, note: "", items };
}

// ---- a readable rendering of any tool's structuredContent ----

function scalar(v) {
  if (v === null || v === undefined) return "";
  if (typeof v === "boolean") return v ? "yes" : "no";
  if (typeof v === "number") return fmtNumber(v);
  return String(v);
}

function words(key) {
  return key.replace(/([a-z])([A-Z])/g, "$1 $2").replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase());
}

function objectLine(obj) {
  return Object.entries(obj)
    .filter(([, v]) => v !== null && v !== undefined && typeof v !== "object")
    .slice(0, 5)
    .map(([k, v]) => words(k) + ": " + scalar(v))
    .join(" · ");
}

function genericLines(sc) {
  const lines = [];
  for (const [key, value] of Object.entries(sc || {})) {
    if (value === null || value === undefined) continue;
    if (Array.isArray(value)) {
      if (!value.length) continue;
      if (value.every((v) => typeof v !== "object" || v === null)) {
        const shown = value.slice(0, 12).map(scalar).join(", ");
        lines.push({ k: words(key), v: shown + (value.length > 12 ? " and " + fmtNumber(value.length - 12) + " more" : "") });
      } else {
        value.forEach((v, i) => lines.push({ k: words(key) + " " + fmtNumber(i + 1), v: typeof v === "object" ? objectLine(v) : scalar(v) }));
      }
    } else if (typeof value === "object") {
      const line = objectLine(value);
      if (line) lines.push({ k: words(key), v: line });
    } else {
      lines.push({ k: words(key), v: scalar(value) });
    }
  }
  return lines;
}

function receiptLines(tool, sc) {
  if (!sc || typeof sc !== "object") return [];
  if (Array.isArray(sc.deleted) && typeof sc.permanent === "boolean") {
    const lines = [];
    lines.push({
      k: sc.permanent ? "Deleted for good" : "Moved to the trash",
      v: sc.deleted.length ? sc.deleted.join(", ") : "none",
      cls: "deleted",
    });
    for (const f of sc.failed || []) lines.push({ k: "Not deleted " + f.what, v: f.message, cls: "failed" });
    for (const u of sc.unknown || []) lines.push({ k: "Unclear " + (u.key || u.what), v: u.message, cls: "unknown" });
    return lines;
  }
  return genericLines(sc);
}

function outcomeLine(tool, sc) {
  if (sc && Array.isArray(sc.deleted)) {
    const n = sc.deleted.length;
    const failed = (sc.failed || []).length;
    return (sc.permanent ? "Deleted " : "Moved to the trash ") + fmtNumber(n) + (n === 1 ? " item" : " items") +
      (failed ? "; " + fmtNumber(failed) + " failed" : "") + ".";
  }
  return tool ? "Done: " + toolWords(tool).toLowerCase() + "." : "Done.";
}

// ---- view ----

function render(focusDecline) {
  clear(app);
  if (rv.review) renderReview();
  else if (rv.receipt && rv.tool) {
    app.appendChild(h("p", { class: "small muted", "data-testid": "review-tool", text: toolWords(rv.tool) }));
  }
  if (rv.outcome) {
    app.appendChild(h("p", {
      class: "notice rv-outcome " + (rv.outcome.kind === "approved" || rv.outcome.kind === "receipt" ? "ok"
        : rv.outcome.kind === "declined" ? "" : "bad"),
      role: "status",
      "data-testid": "review-outcome",
      "data-outcome": rv.outcome.kind,
      text: rv.outcome.text,
    }));
  }
  if (rv.receipt) renderReceipt();
  if (!rv.review && !rv.outcome && !rv.receipt) {
    app.appendChild(h("p", { class: "muted", "data-testid": "review-empty", text: "Nothing to review." }));
  }
  if (focusDecline) {
    const d = document.querySelector('[data-testid="review-decline"]');
    if (d && !d.disabled) d.focus();
  }
}

function renderReview() {
  const { heading, note, items } = parseSummary(rv.review.summary, rv.review.items);
  const tool = rv.review.tool || rv.tool;
  const pages = Math.max(1, Math.ceil(items.length / LIST_PAGE));
  rv.listPage = Math.min(rv.listPage, pages - 1);
  const shown = items.slice(rv.listPage * LIST_PAGE, (rv.listPage + 1) * LIST_PAGE);
  const expires = rv.review.expiresAt ? fmtDateTime(rv.review.expiresAt) : null;
  const section = h("section", { "aria-labelledby": "rv-heading", "data-testid": "review-question" },
    h("div", { class: "rv-head" },
      h("p", { class: "small muted", "data-testid": "review-tool", text: toolWords(tool) + " — asks before changing" }),
      h("h1", { id: "rv-heading", "data-testid": "review-heading", text: heading }),
      note ? h("p", { class: "small", "data-testid": "review-note", text: note }) : null,
      rv.changedNotice ? h("p", { class: "notice warn small", "data-testid": "review-changed",
        text: "The library changed since the first question: please check again." }) : null),
    shown.length && !rv.answered ? h("ul", { class: "rv-list", "data-testid": "review-list" },
      shown.map((line) => h("li", { "data-testid": "review-item", text: line }))) : null,
    pages > 1 && !rv.answered ? h("div", { class: "rv-pager" }, pager(rv.listPage, pages, (p) => {
      rv.listPage = p;
      render();
      const b = document.querySelector('[data-testid="review-list-' + (p > 0 ? "prev" : "next") + '"]');
      if (b && !b.disabled) b.focus();
    }, "review-list", "Page")) : null,
    expires && !rv.answered ? h("p", { class: "small muted", "data-testid": "review-expires",
      text: "This question expires " + expires + "." }) : null);
  const actions = h("div", { class: "row rv-actions" },
    h("button", {
      type: "button", "data-testid": "review-decline", disabled: rv.busy || rv.answered,
      onclick: () => answer(false),
    }, "Decline"),
    h("button", {
      type: "button", class: "primary", "data-testid": "review-approve", disabled: rv.busy || rv.answered,
      onclick: () => answer(true),
    }, "Approve"),
    rv.busy ? h("span", { class: "muted small", role: "status", text: "Sending…" }) : null);
  section.appendChild(actions);
  app.appendChild(section);
}

function renderReceipt() {
  const { lines } = rv.receipt;
  const pages = Math.max(1, Math.ceil(lines.length / RECEIPT_PAGE));
  rv.receipt.page = Math.min(rv.receipt.page, pages - 1);
  const shown = lines.slice(rv.receipt.page * RECEIPT_PAGE, (rv.receipt.page + 1) * RECEIPT_PAGE);
  const box = h("section", { "aria-label": "What changed", "data-testid": "review-receipt" },
    h("h2", { text: "What changed" }),
    lines.length
      ? h("ul", { class: "rv-receipt" }, shown.map((l) => h("li", {
        "data-testid": "review-receipt-line", "data-kind": l.cls || "",
      }, h("span", { class: "k", text: l.k + ": " }), h("span", { text: l.v }))))
      : h("p", { class: "muted", text: "Nothing to report." }),
    pages > 1 ? h("div", { class: "rv-pager" }, pager(rv.receipt.page, pages, (p) => {
      rv.receipt.page = p;
      render();
      const b = document.querySelector('[data-testid="review-receipt-' + (p > 0 ? "prev" : "next") + '"]');
      if (b && !b.disabled) b.focus();
    }, "review-receipt", "Page")) : null);
  app.appendChild(box);
}

async function answer(approve) {
  if (rv.busy || rv.answered || !rv.review) return;
  const rec = rv.review;
  const tool = rec.tool || rv.tool;
  const inputResponses = approve
    ? { confirm: { action: "accept", content: { confirm: true } } }
    : { confirm: { action: "decline" } };
  rv.busy = true;
  render();
  let result;
  try {
    result = await bridgeCallTool(tool, rec.arguments || {}, {
      inputResponses,
      requestState: rec.requestState,
      _meta: { [ANSWER_META]: { requestState: rec.requestState, inputResponses } },
    });
  } catch (err) {
    rv.busy = false;
    rv.outcome = { kind: "failed", text: "The answer did not reach the server: " + err.message };
    render();
    return;
  }
  rv.busy = false;
  const heading = parseSummary(rec.summary).heading;
  const again = reviewOf(result);
  if (approve && again) {
    // The library changed between the question and the answer: the server asks again.
    rv.review = again;
    rv.listPage = 0;
    rv.changedNotice = true;
    rv.outcome = null;
    render(true);
    bridgeUpdateModelContext("The person approved " + tool + ", but the library had changed, so it was asked again.");
    return;
  }
  rv.answered = true;
  const text = resultText(result);
  if (!approve) {
    rv.outcome = { kind: "declined", text: text || "Declined: nothing was changed." };
    bridgeUpdateModelContext("The person declined " + tool + " (" + heading + "). Nothing was changed.");
  } else if (result && result.isError) {
    rv.outcome = { kind: "refused", text: text || "The change was not made." };
    bridgeUpdateModelContext("The person approved " + tool + " (" + heading + "), but it failed: " + oneLine(text));
  } else {
    const sc = (result && result.structuredContent) || {};
    rv.outcome = { kind: "approved", text: "Approved. " + outcomeLine(tool, sc) };
    rv.receipt = { lines: receiptLines(tool, sc), page: 0 };
    bridgeUpdateModelContext("The person approved " + tool + " (" + heading + "). " + outcomeLine(tool, sc), sc);
  }
  render();
  const out = document.querySelector('[data-testid="review-outcome"]');
  if (out) {
    out.setAttribute("tabindex", "-1");
    out.focus();
  }
}

function oneLine(text) {
  return String(text || "").replace(/\s+/g, " ").slice(0, 300);
}

function showResult(result) {
  const rec = reviewOf(result);
  rv.outcome = null;
  rv.receipt = null;
  rv.answered = false;
  rv.changedNotice = false;
  if (rec) {
    rv.review = rec;
    rv.listPage = 0;
    render(true);
    return;
  }
  rv.review = null;
  if (result && result.isError) {
    rv.outcome = { kind: "refused", text: resultText(result) || "The tool failed." };
    render();
    return;
  }
  const sc = (result && result.structuredContent) || {};
  rv.outcome = { kind: "receipt", text: outcomeLine(rv.tool, sc) };
  rv.receipt = { lines: receiptLines(rv.tool, sc), page: 0 };
  render();
}

onArrowKeys(
  () => document.querySelector('[data-testid="review-list-prev"], [data-testid="review-receipt-prev"]')?.click(),
  () => document.querySelector('[data-testid="review-list-next"], [data-testid="review-receipt-next"]')?.click(),
);

bridgeOn("context", (ctx) => {
  const name = ctx && ctx.toolInfo && ctx.toolInfo.tool && ctx.toolInfo.tool.name;
  if (typeof name === "string") rv.tool = name;
});
bridgeOn("toolResult", showResult);
bridgeOn("cancelled", () => {
  if (!rv.review && !rv.receipt) {
    rv.outcome = { kind: "cancelled", text: "The call was cancelled: nothing was changed." };
    render();
  }
});
bridgeStart("review");

// Evidence panel: one passage at a time, on the PDF page it comes from, highlighted where it stands.
// Results of zotero_retrieve (passages), fetch ("[page N]" markers) and zotero_read_attachment (pages).

const STAGE_HEIGHT = 270;
const ev = {
  tool: "",
  args: {},
  entries: [],
  index: 0,
  library: null,
  docs: new Map(), // key asked for → Promise<{ doc, attachmentKey }>
  renderSeq: 0,
  renderTask: null,
  wholePage: false,
  showText: false,
  annotated: new Map(), // entry index → outcome text
  numPages: new Map(), // attachment key → page count
  resolvedKeys: new Map(), // key asked for → attachment key
};
let pdfjsPromise = null;

const app = document.getElementById("app");

function loadPdfjs() {
  if (!pdfjsPromise) {
    pdfjsPromise = (async () => {
      const lib = await import(ASSET_BASE + "pdfjs/pdf.min.mjs");
      // The sandboxed frame cannot start a cross-origin Worker: pdf.js runs its worker code on this thread.
      globalThis.pdfjsWorker = await import(ASSET_BASE + "pdfjs/pdf.worker.min.mjs");
      return lib;
    })();
    pdfjsPromise.catch(() => {
      pdfjsPromise = null;
    });
  }
  return pdfjsPromise;
}

function base64ToBytes(b64) {
  if (typeof Uint8Array.fromBase64 === "function") return Uint8Array.fromBase64(b64);
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function loadDocument(key) {
  if (ev.docs.has(key)) return ev.docs.get(key);
  const promise = (async () => {
    const args = { key };
    if (ev.library) args.library = ev.library;
    const result = await bridgeCallTool("zotero_attachment_file", args);
    if (!result || result.isError) throw new Error(resultText(result) || "The file could not be read.");
    const file = result.structuredContent || {};
    if (file.contentType && file.contentType !== "application/pdf") throw new Error("The file is not a PDF.");
    if (typeof file.data !== "string" || !file.data) throw new Error("The server sent no file data.");
    const lib = await loadPdfjs();
    const doc = await lib.getDocument({ data: base64ToBytes(file.data), isEvalSupported: false, useSystemFonts: true })
      .promise;
    const attachmentKey = file.attachmentKey || key;
    ev.resolvedKeys.set(key, attachmentKey);
    ev.numPages.set(attachmentKey, doc.numPages);
    return { doc, attachmentKey, lib };
  })();
  ev.docs.set(key, promise);
  // A failed load may succeed later (a network blip): do not cache the failure.
  promise.catch(() => ev.docs.delete(key));
  return promise;
}

// ---- entries: what one view shows ----

const SOURCE_NO_PAGE = {
  note: "This passage is from a note, which has no page.",
  abstract: "This passage is from the abstract, which has no page.",
};

function entriesFromRetrieve(sc) {
  const titles = new Map();
  const types = new Map();
  for (const item of sc.items || []) {
    titles.set(item.itemKey, item.title || null);
    for (const att of item.attachments || []) types.set(att.key, att.contentType || null);
  }
  return (sc.passages || []).map((p) => {
    const entry = {
      kind: "passage",
      text: p.text || "",
      comment: p.comment || "",
      page: Number.isInteger(p.page) && p.page > 0 ? p.page : null,
      pageLabel: p.pageLabel || null,
      source: p.source,
      itemKey: p.itemKey,
      title: titles.get(p.itemKey) || null,
      fileKey: null,
      annotationKey: null,
      reason: null,
    };
    if (p.source === "annotation") {
      entry.fileKey = p.sourceKey;
      entry.annotationKey = p.sourceKey;
    } else if (p.source === "fulltext") {
      entry.fileKey = p.sourceKey;
      const type = types.get(p.sourceKey);
      if (type && type !== "application/pdf") entry.reason = "The file is not a PDF, so there is no page to show.";
    } else {
      entry.reason = SOURCE_NO_PAGE[p.source] || "This passage has no page to show.";
    }
    if (!entry.reason && !entry.page) {
      entry.reason = "Zotero's full-text index has no page breaks, so the page of this passage is unknown.";
    }
    return entry;
  });
}

function splitPages(text) {
  const re = /\[page (\d+)(?: \(labelled ([^)\]]*)\))?\]/g;
  const marks = [];
  let m;
  while ((m = re.exec(text)) !== null) marks.push({ at: m.index, end: re.lastIndex, page: Number(m[1]), label: m[2] });
  return marks.map((mark, i) => ({
    page: mark.page,
    label: mark.label || null,
    text: text.slice(mark.end, i + 1 < marks.length ? marks[i + 1].at : text.length).trim(),
  }));
}

function entriesFromFetch(sc) {
  const md = sc.metadata || {};
  const base = {
    kind: "page",
    title: sc.title || null,
    creators: md.creators || null,
    year: md.year || null,
    itemKey: sc.id,
    fileKey: md.attachmentKey || null,
    annotationKey: null,
    comment: "",
    source: "fulltext",
  };
  if (md.library) ev.library = md.library;
  const pages = splitPages(sc.text || "");
  if (pages.length && md.attachmentKey) {
    return pages.map((p) => Object.assign({}, base, { text: p.text, page: p.page, pageLabel: p.label, reason: null }));
  }
  let reason = "There is no PDF to show for this item.";
  if (md.attachmentKey && md.textSource === "zotero-index") {
    reason = "The text comes from Zotero's full-text index, which has no page breaks.";
  } else if (md.note) {
    reason = md.note;
  }
  return [Object.assign({}, base, { kind: "passage", text: sc.text || "", page: null, pageLabel: null, reason })];
}

function entriesFromRead(sc) {
  const pages = Array.isArray(sc.pages) ? sc.pages.filter((p) => Number.isInteger(p) && p > 0) : [];
  const base = {
    kind: "page",
    title: null,
    itemKey: null,
    fileKey: sc.attachmentKey,
    annotationKey: null,
    comment: "",
    source: "fulltext",
    pageLabel: null,
    reason: null,
  };
  if (pages.length) {
    // Pages are joined without markers: each page view shows the whole answer's text only in text mode.
    return pages.map((page) => Object.assign({}, base, { page, text: pages.length === 1 ? sc.text || "" : "" }));
  }
  let reason = "This text has no pages to show.";
  if (sc.source === "zotero-index") reason = "The text comes from Zotero's full-text index, which has no page breaks.";
  if (sc.source === "metadata") reason = "This answer describes the file; it holds no text.";
  return [Object.assign({}, base, { kind: "passage", text: sc.text || sc.note || "", page: null, reason })];
}

function buildEntries(result) {
  const sc = (result && result.structuredContent) || {};
  if (Array.isArray(sc.passages)) {
    ev.tool = ev.tool || "zotero_retrieve";
    return entriesFromRetrieve(sc);
  }
  if (sc.metadata && typeof sc.text === "string") {
    ev.tool = ev.tool || "fetch";
    return entriesFromFetch(sc);
  }
  if (typeof sc.attachmentKey === "string") {
    ev.tool = ev.tool || "zotero_read_attachment";
    return entriesFromRead(sc);
  }
  return [];
}

// ---- finding the passage on the page ----

function norm(s) {
  return s.normalize("NFKD").toLowerCase().replace(/[^\p{L}\p{N}]/gu, "");
}

// Where the passage's characters stand in the page's text: [start, end) in the page's normalized text.
function locate(pageNorm, passageNorm) {
  if (!passageNorm || !pageNorm) return null;
  const exact = pageNorm.indexOf(passageNorm);
  if (exact >= 0) return [exact, exact + passageNorm.length];
  // Extraction differs at the edges (hyphens, ligatures, headers): anchor on windows of the passage.
  const w = Math.min(24, passageNorm.length);
  const hits = [];
  for (let i = 0; i + w <= passageNorm.length; i += w) {
    const at = pageNorm.indexOf(passageNorm.slice(i, i + w));
    if (at >= 0) hits.push({ at, offset: i });
  }
  if (!hits.length) return null;
  // Keep the hits that agree with the first one about where the passage starts.
  hits.sort((a, b) => a.at - a.offset - (b.at - b.offset));
  let best = [];
  for (let i = 0; i < hits.length; i++) {
    const group = hits.filter((x) => Math.abs(x.at - x.offset - (hits[i].at - hits[i].offset)) < 200);
    if (group.length > best.length) best = group;
  }
  const start = Math.min(...best.map((x) => x.at));
  const end = Math.max(...best.map((x) => x.at + w));
  return [start, end];
}

function highlightRects(lib, viewport, items, passageText) {
  const parts = [];
  let pos = 0;
  for (const item of items) {
    if (typeof item.str !== "string") continue;
    const n = norm(item.str);
    parts.push({ item, start: pos, len: n.length });
    pos += n.length;
  }
  const pageNorm = parts.map((p) => norm(p.item.str)).join("");
  const range = locate(pageNorm, norm(passageText));
  if (!range) return null;
  const [a, b] = range;
  const rects = [];
  const texts = [];
  for (const part of parts) {
    if (!part.len || part.start >= b || part.start + part.len <= a) continue;
    const from = Math.max(0, a - part.start) / part.len;
    const to = Math.min(part.len, b - part.start) / part.len;
    const tx = lib.Util.transform(viewport.transform, part.item.transform);
    const fontHeight = Math.hypot(tx[2], tx[3]);
    const width = part.item.width * viewport.scale;
    if (!(fontHeight > 0) || !(width > 0)) continue;
    rects.push({
      left: tx[4] + width * from,
      top: tx[5] - fontHeight * 0.95,
      width: width * (to - from),
      height: fontHeight * 1.2,
    });
    const str = part.item.str;
    texts.push(str.slice(Math.floor(str.length * from), Math.ceil(str.length * to)) + (part.item.hasEOL ? " " : ""));
  }
  if (!rects.length) return null;
  return { rects, text: texts.join("").replace(/\s+/g, " ").trim() };
}

// ---- view ----

function citationLine(entry) {
  const parts = [];
  if (entry.title) parts.push(entry.title);
  const by = [entry.creators, entry.year ? "(" + entry.year + ")" : null].filter(Boolean).join(" ");
  if (by) parts.push(by);
  return parts.join(" — ");
}

function pageText(entry, attachmentKey) {
  if (!entry.page) return "No page";
  const total = attachmentKey ? ev.numPages.get(attachmentKey) : undefined;
  const label = entry.pageLabel && entry.pageLabel !== String(entry.page) ? entry.pageLabel : null;
  if (total) {
    return label
      ? "Page " + label + " (" + fmtNumber(entry.page) + " of " + fmtNumber(total) + ")"
      : "Page " + fmtNumber(entry.page) + " of " + fmtNumber(total);
  }
  return "Page " + (label || fmtNumber(entry.page));
}

function zoteroLink(attachmentKey, entry) {
  const lib = ev.library || "";
  const group = /^groups\/(\d+)$/.exec(lib);
  let url = group
    ? "zotero://open-pdf/groups/" + group[1] + "/items/" + encodeURIComponent(attachmentKey)
    : "zotero://open-pdf/library/items/" + encodeURIComponent(attachmentKey);
  const query = [];
  if (entry.page) query.push("page=" + entry.page);
  if (entry.annotationKey) query.push("annotation=" + encodeURIComponent(entry.annotationKey));
  if (query.length) url += "?" + query.join("&");
  return url;
}

function setStatus(text, tone) {
  const status = document.querySelector('[data-testid="evidence-status"]');
  if (!status) return;
  status.textContent = text || "";
  status.className = "status small ev-status" + (tone ? " notice " + tone : "");
}

function render() {
  clear(app);
  if (!ev.entries.length) {
    app.appendChild(h("p", { class: "notice", "data-testid": "evidence-empty", text: "No passages to show." }));
    return;
  }
  const entry = ev.entries[ev.index];
  const count = ev.entries.length;
  const attachmentKey = entry.fileKey ? ev.resolvedKeys.get(entry.fileKey) || null : null;
  const cite = citationLine(entry);
  const noun = entry.kind === "page" ? "Page" : "Passage";
  const canAnnotate = entry.kind === "passage" && entry.page && entry.fileKey && entry.source === "fulltext" &&
    entry.text.trim();

  const head = h("div", { class: "ev-head" },
    cite ? h("p", { class: "ellipsis", "data-testid": "evidence-citation", title: cite, text: cite }) : null,
    h("p", { class: "row small muted" },
      h("span", {
        "data-testid": "evidence-page-number",
        "data-page": entry.page || "",
        text: pageText(entry, attachmentKey),
      }),
      entry.source && entry.kind === "passage" ? h("span", { text: "· " + sourceWord(entry.source) }) : null));

  const stage = h("div", { class: "ev-stage", "data-testid": "evidence-stage" });
  const prev = h("button", {
    type: "button", "data-testid": "evidence-prev", "aria-label": "Previous " + noun.toLowerCase(),
    disabled: ev.index === 0, onclick: () => go(-1),
  }, "‹ Previous");
  const next = h("button", {
    type: "button", "data-testid": "evidence-next", "aria-label": "Next " + noun.toLowerCase(),
    disabled: ev.index >= count - 1, onclick: () => go(1),
  }, "Next ›");
  const pos = h("span", {
    class: "ev-pos", "data-testid": "evidence-position", "aria-live": "polite",
    text: entry.kind === "page"
      ? fmtNumber(ev.index + 1) + " of " + fmtNumber(count) + " pages read"
      : "Passage " + fmtNumber(ev.index + 1) + " of " + fmtNumber(count),
  });
  const hasPage = entry.page && entry.fileKey && !entry.reason;
  const toggleText = hasPage && (entry.text || entry.comment)
    ? h("button", {
      type: "button", "data-testid": "evidence-toggle-text", "aria-pressed": ev.showText ? "true" : "false",
      onclick: () => {
        ev.showText = !ev.showText;
        render();
      },
    }, ev.showText ? "Show page" : "Show text")
    : null;
  const toggleWhole = hasPage && !ev.showText
    ? h("button", {
      type: "button", "data-testid": "evidence-toggle-whole", "aria-pressed": ev.wholePage ? "true" : "false",
      onclick: () => {
        ev.wholePage = !ev.wholePage;
        render();
      },
    }, ev.wholePage ? "Zoom in" : "Whole page")
    : null;
  const open = entry.fileKey
    ? h("button", {
      type: "button", "data-testid": "evidence-open", disabled: !attachmentKey && entry.source === "annotation",
      onclick: () => openInZotero(entry),
    }, "Open in Zotero")
    : null;
  const done = ev.annotated.get(ev.index);
  const annotate = canAnnotate
    ? h("button", {
      type: "button", "data-testid": "evidence-annotate", disabled: Boolean(done),
      onclick: () => annotateInZotero(entry, ev.index),
    }, done ? "Highlighted" : "Highlight in Zotero")
    : null;
  const controls = h("div", { class: "row ev-controls" }, prev, pos, next, h("span", { class: "spacer" }),
    toggleText, toggleWhole, open, annotate);
  const status = h("p", { class: "status small ev-status", role: "status", "data-testid": "evidence-status" });

  app.append(head, stage, controls, status);
  if (done) setStatus(done.text, done.tone);

  if (!hasPage || ev.showText) {
    stage.appendChild(textView(entry, hasPage ? null : entry.reason));
    return;
  }
  stage.appendChild(h("p", { class: "muted", style: "padding:10px", "data-testid": "evidence-page-loading",
    text: "Loading page " + fmtNumber(entry.page) + "…" }));
  drawPage(entry, stage, ++ev.renderSeq);
}

function sourceWord(source) {
  return { annotation: "annotation", note: "note", abstract: "abstract", fulltext: "full text" }[source] || source;
}

function textView(entry, reason) {
  const body = entry.text || entry.comment || "";
  return h("div", { class: "ev-text", "data-testid": "evidence-text" },
    reason ? h("p", { class: "small notice warn", "data-testid": "evidence-no-page", text: reason }) : null,
    body ? h("blockquote", { "data-testid": "evidence-passage", text: body }) : h("p", { class: "muted",
      text: entry.kind === "page" ? "The text of this page is in the answer, not shown separately." : "No text." }),
    entry.comment && entry.text ? h("p", { class: "small muted clamp2", text: "Comment: " + entry.comment }) : null);
}

async function drawPage(entry, stage, seq) {
  let loaded;
  try {
    loaded = await loadDocument(entry.fileKey);
  } catch (err) {
    if (seq !== ev.renderSeq) return;
    clear(stage).appendChild(textView(entry, "The page cannot be shown: " + err.message));
    return;
  }
  if (seq !== ev.renderSeq) return;
  const { doc, lib, attachmentKey } = loaded;
  // The count and the link need the attachment; refresh them once it is known.
  const pn = document.querySelector('[data-testid="evidence-page-number"]');
  if (pn) pn.textContent = pageText(entry, attachmentKey);
  const openBtn = document.querySelector('[data-testid="evidence-open"]');
  if (openBtn) openBtn.disabled = false;
  if (entry.page > doc.numPages) {
    clear(stage).appendChild(textView(entry, "The PDF has only " + fmtNumber(doc.numPages) + " pages."));
    return;
  }
  try {
    const page = await doc.getPage(entry.page);
    const base = page.getViewport({ scale: 1 });
    const stageWidth = stage.clientWidth - 2;
    const stageHeight = STAGE_HEIGHT - 2;
    const scale = ev.wholePage ? stageHeight / base.height : stageWidth / base.width;
    const viewport = page.getViewport({ scale });
    const ratio = Math.min(window.devicePixelRatio || 1, 2);
    const canvas = h("canvas", {
      "data-testid": "evidence-canvas",
      role: "img",
      "aria-label": "PDF page " + (entry.pageLabel || entry.page),
    });
    canvas.width = Math.floor(viewport.width * ratio);
    canvas.height = Math.floor(viewport.height * ratio);
    canvas.style.width = Math.floor(viewport.width) + "px";
    canvas.style.height = Math.floor(viewport.height) + "px";
    const holder = h("div", { class: "ev-page", "data-testid": "evidence-page", "data-page": entry.page }, canvas);

    let hl = null;
    const passage = entry.kind === "passage" ? entry.text : "";
    if (passage.trim()) {
      const content = await page.getTextContent();
      if (seq !== ev.renderSeq) return;
      hl = highlightRects(lib, viewport, content.items, passage);
    }
    let offset = 0;
    if (hl) {
      const top = Math.min(...hl.rects.map((r) => r.top));
      const bottom = Math.max(...hl.rects.map((r) => r.top + r.height));
      const room = viewport.height - stageHeight;
      if (!ev.wholePage && room > 0) {
        offset = bottom - top < stageHeight ? (top + bottom) / 2 - stageHeight / 2 : top - 12;
        offset = Math.max(0, Math.min(room, offset));
      }
      const layer = h("div", {
        class: "ev-hl",
        "data-testid": "evidence-highlight",
        "data-highlight-page": entry.page,
        "data-highlight-text": hl.text,
        role: "img",
        "aria-label": "Highlighted on page " + (entry.pageLabel || entry.page) + ": " + hl.text,
        style: "width:" + viewport.width + "px;height:" + viewport.height + "px",
      });
      for (const r of hl.rects) {
        layer.appendChild(h("div", {
          style: "left:" + r.left.toFixed(1) + "px;top:" + r.top.toFixed(1) + "px;width:" + r.width.toFixed(1) +
            "px;height:" + r.height.toFixed(1) + "px",
        }));
      }
      holder.appendChild(layer);
    }
    const left = ev.wholePage ? Math.max(0, (stageWidth - viewport.width) / 2) : 0;
    holder.style.left = left + "px";
    holder.style.top = -offset + "px";
    if (ev.renderTask) ev.renderTask.cancel();
    const task = page.render({
      canvas,
      canvasContext: canvas.getContext("2d"),
      viewport,
      transform: ratio !== 1 ? [ratio, 0, 0, ratio, 0, 0] : undefined,
    });
    ev.renderTask = task;
    await task.promise;
    if (seq !== ev.renderSeq) return;
    clear(stage).appendChild(holder);
    if (passage.trim() && !hl) {
      setStatus("The passage's words were not found on this page's text layer, so nothing is highlighted.", "warn");
    }
  } catch (err) {
    if (err && err.name === "RenderingCancelledException") return;
    if (seq !== ev.renderSeq) return;
    clear(stage).appendChild(textView(entry, "The page cannot be shown: " + (err && err.message)));
  }
}

function go(step) {
  const target = ev.index + step;
  if (target < 0 || target >= ev.entries.length) return;
  ev.index = target;
  ev.showText = false;
  render();
  const btn = document.querySelector(step < 0 ? '[data-testid="evidence-prev"]' : '[data-testid="evidence-next"]');
  if (btn && !btn.disabled) btn.focus();
  else {
    const other = document.querySelector(step < 0 ? '[data-testid="evidence-next"]' : '[data-testid="evidence-prev"]');
    if (other) other.focus();
  }
}

async function openInZotero(entry) {
  let key = entry.fileKey ? ev.resolvedKeys.get(entry.fileKey) : null;
  if (!key && entry.source !== "annotation") key = entry.fileKey;
  if (!key) return;
  try {
    const res = await bridgeOpenLink(zoteroLink(key, entry));
    if (res && res.isError) setStatus("The host did not open Zotero.", "bad");
  } catch (err) {
    setStatus("The host did not open Zotero: " + err.message, "bad");
  }
}

async function annotateInZotero(entry, index) {
  const btn = document.querySelector('[data-testid="evidence-annotate"]');
  if (btn) btn.disabled = true;
  setStatus("Adding the highlight in Zotero…");
  let outcome;
  try {
    let key = ev.resolvedKeys.get(entry.fileKey) || entry.fileKey;
    const args = { action: "create", itemKey: key, type: "highlight", text: entry.text.slice(0, 5000), page: entry.page };
    if (ev.library) args.library = ev.library;
    const result = await bridgeCallTool("zotero_annotations", args);
    const text = resultText(result);
    if (result && !result.isError) {
      const made = (result.structuredContent && result.structuredContent.created) || {};
      outcome = {
        text: "Highlighted in Zotero on page " + (made.pageLabel || entry.pageLabel || entry.page) + ".",
        tone: "ok",
        done: true,
      };
      bridgeUpdateModelContext("The person highlighted the passage on page " + (made.pageLabel || entry.page) +
        " of attachment " + key + " in Zotero" + (made.annotationKey ? " (annotation " + made.annotationKey + ")." : "."));
    } else if (/read-only|zotero:write/i.test(text)) {
      outcome = { text: "This connection is read-only, so it cannot add highlights to Zotero.", tone: "warn" };
    } else {
      outcome = { text: "The highlight was not added: " + (text || "the server refused it.").slice(0, 300), tone: "bad" };
    }
  } catch (err) {
    outcome = { text: "The highlight was not added: " + err.message, tone: "bad" };
  }
  if (outcome.done || outcome.tone === "warn") ev.annotated.set(index, outcome);
  if (ev.index !== index) return;
  const b = document.querySelector('[data-testid="evidence-annotate"]');
  if (b) {
    b.disabled = Boolean(outcome.done || outcome.tone === "warn");
    if (outcome.done) b.textContent = "Highlighted";
  }
  setStatus(outcome.text, outcome.tone);
}

document.addEventListener("keydown", (event) => {
  const target = event.target;
  if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA")) return;
  if (event.key === "ArrowLeft" || event.key === "PageUp") {
    event.preventDefault();
    go(-1);
  } else if (event.key === "ArrowRight" || event.key === "PageDown") {
    event.preventDefault();
    go(1);
  }
});

function showResult(result) {
  if (result && result.isError && !result.structuredContent) {
    clear(app).appendChild(h("p", { class: "notice bad", "data-testid": "evidence-error",
      text: resultText(result) || "The tool failed." }));
    return;
  }
  ev.entries = buildEntries(result);
  ev.index = 0;
  ev.annotated.clear();
  render();
}

bridgeOn("toolInput", (args) => {
  ev.args = args || {};
  if (typeof ev.args.library === "string") ev.library = ev.args.library;
});
bridgeOn("toolResult", showResult);
bridgeOn("cancelled", () => {
  if (!ev.entries.length) clear(app).appendChild(h("p", { class: "notice", text: "The call was cancelled." }));
});
let lastWidth = 0;
bridgeOn("context", () => {
  // A new width changes the page's scale: draw it again.
  if (ev.entries.length && window.innerWidth !== lastWidth) {
    lastWidth = window.innerWidth;
    render();
  }
});
window.addEventListener("resize", () => {
  if (ev.entries.length && Math.abs(window.innerWidth - lastWidth) > 8) {
    lastWidth = window.innerWidth;
    render();
  }
});
lastWidth = window.innerWidth;
bridgeStart("evidence");

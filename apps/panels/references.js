// References panel: every reference of a zotero_check_references call, retracted ones first, a row opens
// to show what disagrees and the passages found for citing sentences; imports the missing works on request.

const ROWS_PER_PAGE = 6;
const FLAG_WORDS = {
  retracted: "Retracted",
  corrected: "Corrected",
  expressionOfConcern: "Concern",
  updated: "Updated",
  preprintPublished: "Published since",
  duplicateCitation: "Cited twice",
  missingFromBib: "Missing from .bib",
  neverCited: "Never cited",
  unreadable: "Unreadable",
  ambiguousKey: "Ambiguous key",
};
const OUTCOME_WORDS = { matched: "In library", notInLibrary: "Not in library", unresolved: "Unresolved" };
const OUTCOME_TONE = { matched: "ok", notInLibrary: "warn", unresolved: "neutral" };

const rf = {
  args: {},
  result: null,
  refs: [],
  page: 0,
  open: null, // position of the expanded reference
  sentence: 0,
  confirming: false,
  importing: false,
  importOutcome: null, // { tone, text, lines }
};

const app = document.getElementById("app");

function rank(ref) {
  const flags = ref.flags || [];
  if (flags.some((f) => f.kind === "retracted")) return 0;
  if (flags.length) return 1;
  return 2;
}

function sortRefs(refs) {
  return refs.slice().sort((a, b) => rank(a) - rank(b) || a.position - b.position);
}

function summary(sc) {
  const c = sc.counts || {};
  const total = sc.totalReferences || (sc.references || []).length;
  const shown = (sc.references || []).length;
  const parts = [
    h("span", { "data-testid": "references-total", text: fmtNumber(total) + (total === 1 ? " reference" : " references") +
      (shown < total ? " (" + fmtNumber(shown) + " checked here)" : "") }),
  ];
  const badge = (key, tone, word) => h("span", {
    class: "badge " + tone, "data-testid": "references-count-" + key, "data-count": c[key] || 0,
    text: fmtNumber(c[key] || 0) + " " + word,
  });
  if (c.retracted) parts.push(badge("retracted", "bad", "retracted"));
  if (c.flagged) parts.push(badge("flagged", "warn", "flagged"));
  parts.push(badge("matched", "ok", "in library"));
  parts.push(badge("notInLibrary", "warn", "not in library"));
  parts.push(badge("unresolved", "neutral", "unresolved"));
  return h("div", { class: "rf-summary", "data-testid": "references-summary" }, parts);
}

function importBlock(sc) {
  const missing = (sc.counts && sc.counts.notInLibrary) || 0;
  if (rf.importOutcome) {
    const o = rf.importOutcome;
    return h("div", { class: "notice rf-import " + o.tone, role: "status", tabindex: "-1",
      "data-testid": "references-import-outcome" },
      h("p", { text: o.text }),
      o.lines.length ? h("ul", { class: "small", style: "margin:4px 0 0;padding-left:1.2em" },
        o.lines.slice(0, 2).map((l) => h("li", { class: "ellipsis", text: l }))) : null,
      o.lines.length > 2 ? h("p", { class: "small muted", text: "and " + fmtNumber(o.lines.length - 2) + " more" }) : null);
  }
  if (!missing) return null;
  if (rf.confirming || rf.importing) {
    const word = fmtNumber(missing) + (missing === 1 ? " work" : " works");
    return h("div", { class: "notice rf-import row", "data-testid": "references-import-confirm" },
      h("span", { id: "rf-confirm-q", text: rf.importing ? "Importing " + word + "…" : "Import " + word + " into the library?" }),
      h("span", { class: "spacer" }),
      h("button", { type: "button", "data-testid": "references-import-cancel", disabled: rf.importing,
        onclick: () => { rf.confirming = false; render(); focusTestid("references-import"); } }, "Cancel"),
      h("button", { type: "button", class: "primary", "data-testid": "references-import-yes", disabled: rf.importing,
        "aria-describedby": "rf-confirm-q", onclick: runImport }, "Import"));
  }
  return h("div", { class: "rf-import row" },
    h("button", { type: "button", "data-testid": "references-import",
      onclick: () => { rf.confirming = true; render(); focusTestid("references-import-cancel"); } },
    "Import the missing ones (" + fmtNumber(missing) + ")"));
}

function focusTestid(id) {
  const el = document.querySelector('[data-testid="' + id + '"]');
  if (el) el.focus();
}

async function runImport() {
  rf.importing = true;
  render();
  const args = Object.assign({}, rf.args, { import: true });
  let result;
  try {
    result = await bridgeCallTool("zotero_check_references", args);
  } catch (err) {
    result = { isError: true, content: [{ type: "text", text: err.message }] };
  }
  rf.importing = false;
  rf.confirming = false;
  if (!result || result.isError) {
    const text = resultText(result) || "The import failed.";
    const ro = /read-only|zotero:write/i.test(text);
    rf.importOutcome = {
      tone: ro ? "warn" : "bad",
      text: ro ? "This connection is read-only, so nothing can be imported." : "Nothing was imported: " + text.slice(0, 300),
      lines: [],
    };
    bridgeUpdateModelContext("The person asked to import the missing references; it failed: " + text.slice(0, 300));
  } else {
    const sc = result.structuredContent || {};
    const imported = [];
    const notImported = [];
    for (const ref of sc.references || []) {
      if (!ref.imported) continue;
      if (ref.imported.itemKey) imported.push(ref.label + " → " + ref.imported.itemKey + (ref.imported.note ? " (" + ref.imported.note + ")" : ""));
      else notImported.push(ref.label + ": " + ref.imported.note);
    }
    rf.importOutcome = {
      tone: imported.length ? "ok" : "warn",
      text: "Imported " + fmtNumber(imported.length) + (imported.length === 1 ? " work" : " works") +
        (notImported.length ? "; " + fmtNumber(notImported.length) + " not imported." : "."),
      lines: imported.concat(notImported),
    };
    bridgeUpdateModelContext("The person imported the missing references: " + rf.importOutcome.text + " " +
      imported.concat(notImported).slice(0, 20).join("; "));
    showResult(result, true);
    focusTestid("references-import-outcome");
    return;
  }
  render();
  focusTestid("references-import-outcome");
}

function flagBadges(ref, max) {
  const flags = ref.flags || [];
  const shown = flags.slice(0, max).map((f) => h("span", {
    class: "badge " + (f.kind === "retracted" ? "bad" : "warn"), "data-flag": f.kind,
    text: FLAG_WORDS[f.kind] || f.kind,
  }));
  if (flags.length > max) shown.push(h("span", { class: "badge neutral", text: "+" + fmtNumber(flags.length - max) }));
  return shown;
}

function row(ref) {
  const expanded = rf.open === ref.position;
  const flags = ref.flags || [];
  const retracted = flags.some((f) => f.kind === "retracted");
  const title = ref.title || "(no title)";
  return h("tr", {
    class: retracted ? "flag-retracted" : "",
    "data-testid": "references-row",
    "data-outcome": ref.outcome,
    "data-position": ref.position,
    "data-flags": flags.map((f) => f.kind).join(" "),
  },
  h("td", { class: "small", text: fmtNumber(ref.position) }),
  h("td", {},
    h("span", { class: "rf-label ellipsis mono small", title: ref.label, text: ref.label }),
    h("span", { class: "rf-title ellipsis", title, text: title })),
  h("td", {},
    h("div", { class: "rf-flags" },
      flags.length ? flagBadges(ref, 1) : h("span", { class: "badge " + OUTCOME_TONE[ref.outcome],
        text: OUTCOME_WORDS[ref.outcome] || ref.outcome }))),
  h("td", {},
    h("button", {
      type: "button",
      "aria-expanded": expanded ? "true" : "false",
      "aria-controls": "rf-detail-" + ref.position,
      "aria-label": (expanded ? "Hide details of reference " : "Show details of reference ") + ref.position + ": " + ref.label,
      "data-testid": "references-expand",
      onclick: () => toggle(ref.position),
    }, expanded ? "Hide" : "Details")));
}

function detail(ref) {
  const parts = [];
  parts.push(h("p", { class: "small" },
    h("span", { class: "badge " + OUTCOME_TONE[ref.outcome], text: OUTCOME_WORDS[ref.outcome] || ref.outcome }),
    ref.itemKey ? " " + ref.itemKey + (ref.matchedBy ? " (by " + ref.matchedBy + ")" : "") : "",
    ref.registry ? " · " + ref.registry.source + (ref.registry.doi ? ": " + ref.registry.doi : "") : ""));
  for (const f of ref.flags || []) {
    parts.push(h("p", { class: "small clamp2 rf-flagline " + (f.kind === "retracted" ? "bad" : "warn"), "data-testid": "references-flag",
      "data-flag": f.kind, text: (FLAG_WORDS[f.kind] || f.kind) + ": " + f.detail + (f.source ? " (" + f.source + ")" : "") }));
  }
  if (ref.outcome === "unresolved" && ref.reason) {
    parts.push(h("p", { class: "small clamp2", text: "Why: " + ref.reason }));
  }
  const dis = ref.disagreements || [];
  if (dis.length) {
    parts.push(h("table", { class: "rf-dis small", "data-testid": "references-disagreements" },
      h("thead", {}, h("tr", {}, h("th", { scope: "col", text: "Field" }), h("th", { scope: "col", text: "Manuscript" }),
        h("th", { scope: "col", text: "Library" }), h("th", { scope: "col", text: "Registry agrees" }))),
      h("tbody", {}, dis.slice(0, 6).map((d) => h("tr", { "data-field": d.field },
        h("td", { text: d.field }), h("td", { text: d.manuscript }), h("td", { text: d.library || "(empty)" }),
        h("td", { text: d.registryAgreesWith || "—" }))))));
  }
  const support = ref.support || [];
  if (support.length) {
    rf.sentence = Math.min(rf.sentence, support.length - 1);
    const s = support[rf.sentence];
    const passages = (s.passages || []).slice(0, 2);
    parts.push(h("div", { "data-testid": "references-support", "data-verdict": s.verdict },
      h("p", { class: "small clamp2", text: "Line " + fmtNumber(s.line) + ": “" + s.sentence + "”" }),
      passages.length ? passages.map((p) => h("p", { class: "small rf-pass clamp2", "data-testid": "references-passage",
        text: p.text + (p.page ? " (p. " + (p.pageLabel || p.page) + ")" : "") }))
        : h("p", { class: "small muted", text: s.verdict === "noText" ? "Nothing of the item could be read." : "No passage found." }),
      support.length > 1 ? pager(rf.sentence, support.length, (i) => {
        rf.sentence = i;
        render();
        focusTestid("references-sentence-" + (i > 0 ? "prev" : "next"));
      }, "references-sentence", "Sentence") : null));
  }
  return h("div", { class: "rf-detail", id: "rf-detail-" + ref.position }, parts);
}

function toggle(position) {
  rf.open = rf.open === position ? null : position;
  rf.sentence = 0;
  render();
  const btn = [...document.querySelectorAll('[data-testid="references-expand"]')]
    .find((b) => b.getAttribute("aria-controls") === "rf-detail-" + position);
  if (btn) btn.focus();
}

function render() {
  clear(app);
  const sc = (rf.result && rf.result.structuredContent) || null;
  if (!sc) return;
  app.appendChild(summary(sc));
  const refs = rf.refs;
  const openNow = refs.some((r) => r.position === rf.open);
  // While a row is open its details use the room of the import controls.
  const imp = openNow && !rf.importing && !rf.confirming ? null : importBlock(sc);
  if (imp) app.appendChild(imp);
  if (!refs.length) {
    app.appendChild(h("p", { class: "muted", text: "No references found in the text." }));
    return;
  }
  const pages = Math.max(1, Math.ceil(refs.length / ROWS_PER_PAGE));
  rf.page = Math.min(rf.page, pages - 1);
  let shown = refs.slice(rf.page * ROWS_PER_PAGE, (rf.page + 1) * ROWS_PER_PAGE);
  const open = shown.find((r) => r.position === rf.open);
  // An open row takes the room of the others on its page, so the panel keeps its height.
  if (open) shown = [open];
  const body = h("tbody", {});
  for (const ref of shown) {
    body.appendChild(row(ref));
    if (ref === open) body.appendChild(h("tr", {}, h("td", { class: "detail", colspan: "4" }, detail(ref))));
  }
  app.appendChild(h("table", { class: "rf", "data-testid": "references-table" },
    h("caption", { class: "sr-only", text: "References, flagged first" }),
    h("colgroup", {}, h("col", { class: "pos" }), h("col", {}), h("col", { class: "out" }), h("col", { class: "more" })),
    h("thead", {}, h("tr", {}, h("th", { scope: "col", text: "#" }), h("th", { scope: "col", text: "Reference" }),
      h("th", { scope: "col", text: "Outcome" }), h("th", { scope: "col" }, h("span", { class: "sr-only", text: "Details" })))),
    body));
  if (pages > 1 && !open) {
    app.appendChild(h("div", { class: "rf-pager" }, pager(rf.page, pages, (p) => {
      rf.page = p;
      render();
      focusTestid("references-" + (p > 0 ? "prev" : "next"));
    }, "references", "Page")));
  }
  if (sc.nextCursor) {
    app.appendChild(h("p", { class: "small muted", "data-testid": "references-more",
      text: "More references remain: ask to check the rest." }));
  }
}

function showResult(result, keepOutcome) {
  if (result && result.isError && !result.structuredContent) {
    clear(app).appendChild(h("p", { class: "notice bad", "data-testid": "references-error",
      text: resultText(result) || "The check failed." }));
    return;
  }
  rf.result = result;
  rf.refs = sortRefs((result.structuredContent && result.structuredContent.references) || []);
  rf.page = 0;
  rf.open = null;
  if (!keepOutcome) rf.importOutcome = null;
  render();
}

onArrowKeys(
  () => document.querySelector('[data-testid="references-sentence-prev"], [data-testid="references-prev"]')?.click(),
  () => document.querySelector('[data-testid="references-sentence-next"], [data-testid="references-next"]')?.click(),
);
bridgeOn("toolInput", (args) => {
  rf.args = Object.assign({}, args || {});
  delete rf.args.import;
});
bridgeOn("toolResult", (r) => showResult(r, false));
bridgeOn("cancelled", () => {
  if (!rf.result) clear(app).appendChild(h("p", { class: "notice", text: "The check was cancelled." }));
});
bridgeStart("references");

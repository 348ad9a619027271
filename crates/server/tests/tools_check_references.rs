//! `zotero_check_references` against the demo library and recorded registry answers (the CrossRef bodies in
//! crates/core/src/sources/resolve/fixtures, served at their real URLs by the test bench's web server). The
//! manuscripts in tests/refcheck/ were written for these tests: every outcome and flag appears in them.

mod common;

use common::dav::{bench, source_fixture, Bench};
use common::{error_text, ok};
use serde_json::{json, Value};
use zotero_mcp_server::auth::Grant;
use zotero_sim::LibraryRef;

const LIB: LibraryRef = LibraryRef::User(1234567);
const JSON: &[(&str, &str)] = &[("content-type", "application/json")];
const WAKEFIELD_DOI: &str = "10.1016/s0140-6736(97)11096-0";

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/refcheck/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// The demo library with the Wakefield paper in it (as a reader saved it before its retraction), and CrossRef
/// answering for the retracted paper, the bioRxiv preprint, the corrected PLOS paper and a bibliographic search.
fn setup() -> (Bench, String) {
    let bench = bench(true);
    let wakefield = bench.sim.insert_item(
        LIB,
        json!({
            "itemType": "journalArticle",
            "title": "Ileal-lymphoid-nodular hyperplasia, non-specific colitis, and pervasive developmental disorder in children",
            "creators": [{"creatorType": "author", "firstName": "A. J.", "lastName": "Wakefield"}],
            "date": "1998-02",
            "publicationTitle": "The Lancet",
            "volume": "351",
            "pages": "637-641",
            "DOI": WAKEFIELD_DOI,
        }),
    );
    bench.serve(
        &format!("api.crossref.org/works/{WAKEFIELD_DOI}"),
        200,
        JSON,
        &source_fixture("crossref-retracted-wakefield.json"),
    );
    bench.serve(
        "api.crossref.org/works/10.1101/097196",
        200,
        JSON,
        &source_fixture("crossref-preprint-with-published-version.json"),
    );
    bench.serve(
        "api.crossref.org/works/10.1371/journal.pone.0033693",
        200,
        JSON,
        &source_fixture("crossref-corrected-plos.json"),
    );
    // Every bibliographic search gets the recorded answer for the CERMINE reference.
    bench.serve("api.crossref.org/works", 200, JSON, &source_fixture("crossref-bibliographic-cermine.json"));
    (bench, wakefield)
}

fn writes(bench: &Bench) -> usize {
    bench.sim.requests().iter().filter(|r| r.method != "GET").count()
}

fn reference<'a>(out: &'a Value, label: &str) -> &'a Value {
    out["references"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == label)
        .unwrap_or_else(|| panic!("no reference {label} in {out:#}"))
}

fn flags(reference: &Value) -> Vec<String> {
    reference["flags"]
        .as_array()
        .map(|f| f.iter().map(|f| f["kind"].as_str().unwrap().to_owned()).collect())
        .unwrap_or_default()
}

fn read_only() -> Grant {
    Grant::read_only("reader")
}

async fn check(bench: &Bench, arguments: Value) -> Value {
    bench.tool("zotero_check_references", read_only(), arguments).await
}

#[tokio::test]
async fn a_latex_manuscript_gets_every_outcome_and_flag() {
    let (bench, wakefield) = setup();
    let result =
        check(&bench, json!({"text": fixture("manuscript.tex"), "bibtex": fixture("manuscript.bib"), "limit": 60}))
            .await;
    let out = ok(&result);
    assert_eq!(out["format"], "latex");
    let labels: Vec<&str> =
        out["references"].as_array().unwrap().iter().map(|r| r["label"].as_str().unwrap()).collect();
    assert_eq!(
        labels,
        [
            "whitfield2021geometric",
            "marchetti2022equivariant",
            "wakefield1998ileal",
            "fenner2016roadmap",
            "li2021heat",
            "smith2020missing",
            "tkaczyk2015cermine",
            "whitfield2021copy",
            "halvorsen2021feeding",
        ]
    );
    assert_eq!(out["totalReferences"], 9);
    assert_eq!(out["counts"], json!({"matched": 6, "notInLibrary": 2, "unresolved": 1, "flagged": 6, "retracted": 1}));
    assert!(out.get("nextCursor").is_none());

    // Matched by citation key, with the wrong year in the .bib (no registry record for this demo DOI).
    let whitfield = reference(out, "whitfield2021geometric");
    assert_eq!(whitfield["outcome"], "matched");
    assert_eq!(whitfield["itemKey"], "T6W7H8UE");
    assert_eq!(whitfield["matchedBy"], "citationKey");
    assert_eq!(whitfield["disagreements"], json!([{"field": "year", "manuscript": "2020", "library": "2021"}]));
    assert_eq!(flags(whitfield), ["duplicateCitation"]);
    assert_eq!(whitfield["support"][0]["verdict"], "passagesFound");
    assert_eq!(whitfield["support"][0]["line"], 6);
    assert_eq!(whitfield["support"][0]["passages"][0]["source"], "abstract");

    // One work under a second key: matched by DOI, flagged on both.
    let copy = reference(out, "whitfield2021copy");
    assert_eq!((copy["itemKey"].as_str(), copy["matchedBy"].as_str()), (Some("T6W7H8UE"), Some("doi")));
    assert_eq!(flags(copy), ["duplicateCitation"]);
    assert!(copy["flags"][0]["detail"].as_str().unwrap().contains("whitfield2021geometric"));

    let marchetti = reference(out, "marchetti2022equivariant");
    assert_eq!(marchetti["itemKey"], "KPDKK5UT");
    assert!(marchetti.get("disagreements").is_none(), "{marchetti}");
    assert!(marchetti.get("flags").is_none(), "{marchetti}");
    assert_eq!(marchetti["support"][0]["verdict"], "passagesFound");

    // The retracted paper: matched by DOI; CrossRef's notices (Retraction Watch) flag it; the registry says
    // the library's year is right and the manuscript's wrong; nothing of it can be read.
    let retracted = reference(out, "wakefield1998ileal");
    assert_eq!(retracted["itemKey"], wakefield.as_str());
    assert_eq!(retracted["matchedBy"], "doi");
    assert_eq!(flags(retracted), ["retracted", "corrected"]);
    let notice = retracted["flags"][0]["detail"].as_str().unwrap();
    assert!(notice.contains("doi:10.1016/s0140-6736(10)60175-4") && notice.contains("2010-02-06"), "{notice}");
    assert!(notice.contains("Retraction Watch"), "{notice}");
    assert_eq!(retracted["flags"][0]["source"], "CrossRef");
    assert_eq!(
        retracted["disagreements"],
        json!([{"field": "year", "manuscript": "1999", "library": "1998", "registryAgreesWith": "library"}])
    );
    assert_eq!(retracted["support"][0]["verdict"], "noText");

    // A preprint not in the library, resolved from its DOI, with its published version.
    let preprint = reference(out, "fenner2016roadmap");
    assert_eq!(preprint["outcome"], "notInLibrary");
    assert_eq!(preprint["registry"]["source"], "CrossRef");
    assert_eq!(preprint["registry"]["foundBy"], "identifier");
    assert_eq!(preprint["registry"]["itemType"], "preprint");
    assert_eq!(flags(preprint), ["preprintPublished"]);
    assert!(preprint["flags"][0]["detail"].as_str().unwrap().contains("10.1038/s41597-019-0031-8"));

    // Two citing sentences: one the abstract bears out, one it does not.
    let heat = reference(out, "li2021heat");
    assert_eq!(heat["itemKey"], "DY5TNQKD");
    let verdicts: Vec<&str> =
        heat["support"].as_array().unwrap().iter().map(|s| s["verdict"].as_str().unwrap()).collect();
    assert_eq!(verdicts, ["passagesFound", "weak"]);

    // Cited, but in neither the .bib nor the library.
    let missing = reference(out, "smith2020missing");
    assert_eq!(missing["outcome"], "unresolved");
    assert_eq!(flags(missing), ["missingFromBib"]);
    assert!(missing["reason"].as_str().unwrap().contains("smith2020missing"));

    // No identifier: CrossRef's bibliographic search, judged on title, year and first author.
    let cermine = reference(out, "tkaczyk2015cermine");
    assert_eq!(cermine["outcome"], "notInLibrary");
    assert_eq!(cermine["registry"]["foundBy"], "bibliographicSearch");
    assert_eq!(cermine["registry"]["confidence"], "high");
    assert_eq!(cermine["registry"]["doi"], "10.1007/s10032-015-0249-8");

    // In the .bib, never cited.
    let never = reference(out, "halvorsen2021feeding");
    assert_eq!(never["itemKey"], "YBSGFPA9");
    assert_eq!(flags(never), ["neverCited"]);

    // A read-only check writes nothing.
    assert_eq!(writes(&bench), 0);
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("6 matched · 2 not in the library · 1 unresolved"), "{text}");
    assert!(text.contains("**retracted**"), "{text}");
    // The lines docs/sources.md shows (its example of a reference check).
    for line in [
        "- [ ] whitfield2021geometric “Geometric deep learning enables accurate protein structure prediction from \
         single sequences”: in the library as T6W7H8UE (by citationKey)",
        "  - year: manuscript “2020”, library “2021”\n",
        "  - line 6: “FoldGraph predicts backbone and side-chain coordinates from a single sequence, without multiple \
         sequence alignments.” — passagesFound",
        "  - **retracted**: CrossRef lists a retraction notice (doi:10.1016/s0140-6736(10)60175-4, 2010-02-06, from the \
         Retraction Watch database)",
        "  - year: manuscript “1999”, library “1998”; the registry agrees with the library",
        "  - CrossRef (bibliographicSearch, high confidence): doi:10.1007/s10032-015-0249-8",
    ] {
        assert!(text.contains(line), "{line}\n---\n{text}");
    }
}

#[tokio::test]
async fn markdown_citations_are_read_with_their_bib() {
    let (bench, _) = setup();
    let result = check(
        &bench,
        json!({"text": fixture("manuscript.md"), "bibtex": fixture("manuscript.bib"), "checkRegistry": false}),
    )
    .await;
    let out = ok(&result);
    assert_eq!(out["format"], "markdown");
    let keys: Vec<(&str, &str)> = out["references"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["label"].as_str().unwrap(), r["itemKey"].as_str().unwrap_or("-")))
        .collect();
    // The cited three first, then the .bib's entries never cited.
    assert_eq!(
        keys[..3],
        [("whitfield2021geometric", "T6W7H8UE"), ("marchetti2022equivariant", "KPDKK5UT"), ("li2021heat", "DY5TNQKD")]
    );
    assert!(out["references"].as_array().unwrap()[3..].iter().all(|r| flags(r).contains(&"neverCited".to_owned())));
    assert_eq!(reference(out, "li2021heat")["support"][0]["verdict"], "passagesFound");
    // Without the registries nothing leaves for CrossRef, and what is not in the library stays unresolved.
    assert_eq!(reference(out, "fenner2016roadmap")["outcome"], "unresolved");
    assert!(bench.sim.requests().iter().all(|r| !r.path.contains("crossref")));
}

#[tokio::test]
async fn a_numbered_reference_list_is_matched_by_title_and_searched_with_confidence() {
    let (bench, wakefield) = setup();
    let result = check(&bench, json!({"text": fixture("references.txt")})).await;
    let out = ok(&result);
    assert_eq!(out["format"], "referenceList");
    let first = reference(out, "[1]");
    assert_eq!((first["itemKey"].as_str(), first["matchedBy"].as_str()), (Some("T6W7H8UE"), Some("title")));
    let second = reference(out, "[2]");
    assert_eq!(second["itemKey"], wakefield.as_str());
    assert_eq!(second["matchedBy"], "title");
    assert_eq!(flags(second), ["retracted", "corrected"], "the library item's DOI is asked about");
    let third = reference(out, "[3]");
    assert_eq!(third["outcome"], "notInLibrary");
    assert_eq!(third["registry"]["confidence"], "high");
    // The search's best candidate for an unknown work does not agree with it: not taken, and said so.
    let fourth = reference(out, "[4]");
    assert_eq!(fourth["outcome"], "unresolved");
    assert!(fourth["reason"].as_str().unwrap().contains("not taken"), "{fourth}");
    assert!(fourth.get("registry").is_none());
}

#[tokio::test]
async fn identifiers_are_resolved_and_flagged() {
    let (bench, _) = setup();
    let text = "10.1101/097196\n10.1038/s41592-021-01187-3\n10.1371/journal.pone.0033693";
    let out = ok(&check(&bench, json!({"text": text})).await).clone();
    assert_eq!(out["format"], "identifiers");
    let outcomes: Vec<(&str, Vec<String>)> =
        out["references"].as_array().unwrap().iter().map(|r| (r["outcome"].as_str().unwrap(), flags(r))).collect();
    assert_eq!(
        outcomes,
        [
            ("notInLibrary", vec!["preprintPublished".to_owned()]),
            ("matched", vec![]),
            ("notInLibrary", vec!["corrected".to_owned()]),
        ]
    );
    assert!(out["references"][2]["flags"][0]["detail"].as_str().unwrap().contains("from the publisher"));
}

#[tokio::test]
async fn a_long_list_continues_with_the_cursor_and_nothing_repeats() {
    let (bench, _) = setup();
    let args = json!({"text": fixture("manuscript.tex"), "bibtex": fixture("manuscript.bib"), "limit": 4});
    let first = ok(&check(&bench, args.clone()).await).clone();
    assert_eq!(first["references"].as_array().unwrap().len(), 4);
    let cursor = first["nextCursor"].as_str().expect("a cursor").to_owned();
    let mut seen: Vec<String> =
        first["references"].as_array().unwrap().iter().map(|r| r["label"].as_str().unwrap().to_owned()).collect();
    let mut next = Some(cursor);
    let mut calls = 1;
    while let Some(cursor) = next {
        let mut args = args.clone();
        args["cursor"] = json!(cursor);
        let page = ok(&check(&bench, args).await).clone();
        seen.extend(page["references"].as_array().unwrap().iter().map(|r| r["label"].as_str().unwrap().to_owned()));
        next = page["nextCursor"].as_str().map(str::to_owned);
        calls += 1;
        assert!(calls < 5);
    }
    assert_eq!(seen.len(), 9);
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 9, "{seen:?}");

    // A cursor is refused on another text.
    let refused = check(&bench, json!({"text": fixture("references.txt"), "cursor": first["nextCursor"]})).await;
    assert!(error_text(&refused).contains("belongs to another text"));
}

#[tokio::test]
async fn the_library_is_read_once_and_then_only_what_changed() {
    let (bench, _) = setup();
    let args = json!({"text": "10.1038/s41592-021-01187-3", "checkRegistry": false});
    ok(&check(&bench, args.clone()).await);
    let before = bench.sim.requests().len();
    ok(&check(&bench, args.clone()).await);
    let second: Vec<String> =
        bench.sim.requests()[before..].iter().map(|r| format!("{}?{}", r.path, r.query)).collect();
    assert_eq!(second.len(), 1, "only the version check: {second:?}");

    // An item added since is found by the next check.
    let added = bench.sim.insert_item(
        LIB,
        json!({"itemType": "journalArticle", "title": "A later addition to the library", "DOI": "10.5555/later.1"}),
    );
    let out = ok(&check(&bench, json!({"text": "10.5555/later.1", "checkRegistry": false})).await).clone();
    assert_eq!(out["references"][0]["itemKey"], added.as_str());
}

#[tokio::test]
async fn a_read_only_grant_cannot_import_and_import_adds_exactly_the_missing_works() {
    let (bench, _) = setup();
    let text = "10.1101/097196\n10.1038/s41592-021-01187-3";
    let refused = check(&bench, json!({"text": text, "import": true})).await;
    assert!(error_text(&refused).contains("zotero:write"), "{refused}");
    assert_eq!(writes(&bench), 0);
    assert!(bench.sim.requests().iter().all(|r| !r.path.contains("crossref")), "refused before any lookup");

    let result = bench.write("zotero_check_references", json!({"text": text, "import": true})).await;
    let out = ok(&result);
    let imported = &out["references"][0]["imported"];
    let key = imported["itemKey"].as_str().expect("the preprint was imported");
    assert!(out["references"][1].get("imported").is_none(), "the matched work is not imported again");
    let item = bench.sim.item(LIB, key).expect("the new item");
    assert_eq!(item["data"]["DOI"], "10.1101/097196");
    assert_eq!(item["data"]["itemType"], "preprint");
    // One item written, in one batch (and no PDF: OpenAlex has none here).
    assert_eq!(writes(&bench), 1);
}

#[tokio::test]
async fn a_call_stops_within_its_request_budget_and_the_cursor_carries_on() {
    let (bench, _) = setup();
    // Thirty DOIs no registry knows: CrossRef, then DataCite, for each.
    let text: Vec<String> = (1..=30).map(|n| format!("10.5555/unknown.{n}")).collect();
    let args = json!({"text": text.join("\n"), "limit": 30});
    let first = ok(&check(&bench, args.clone()).await).clone();
    let checked = first["references"].as_array().unwrap().len();
    assert!(checked > 5 && checked < 30, "{checked}");
    assert!(first["requests"].as_u64().unwrap() <= 45, "{first}");
    assert!(first["stopped"].as_str().unwrap().contains("requests are spent"));
    assert!(first["references"].as_array().unwrap().iter().all(|r| r["outcome"] == "unresolved"));
    let reason = first["references"][0]["reason"].as_str().unwrap();
    assert_eq!(
        reason,
        "not in the library, and CrossRef and DataCite know no DOI 10.5555/unknown.1: check the identifier"
    );
    let mut rest = args.clone();
    rest["cursor"] = first["nextCursor"].clone();
    let second = ok(&check(&bench, rest).await).clone();
    assert_eq!(second["firstPosition"].as_u64().unwrap() as usize, checked + 1);
}

#[tokio::test]
async fn a_read_only_grant_writes_nothing_whatever_the_arguments() {
    let (bench, _) = setup();
    let texts = [
        json!({"text": fixture("manuscript.tex"), "bibtex": fixture("manuscript.bib")}),
        json!({"text": fixture("references.txt")}),
        json!({"text": "10.1101/097196\n10.1371/journal.pone.0033693"}),
    ];
    for text in texts {
        for (registry, support, import) in
            [(true, true, false), (false, false, false), (true, true, true), (false, true, true)]
        {
            let mut args = text.clone();
            args["checkRegistry"] = json!(registry);
            args["checkSupport"] = json!(support);
            args["import"] = json!(import);
            let result = check(&bench, args).await;
            assert_eq!(result.get("isError").is_some(), import, "{result}");
        }
    }
    assert_eq!(writes(&bench), 0);
    assert!(bench.dav_requests().iter().all(|r| r.starts_with("GET")), "{:?}", bench.dav_requests());
}

#[tokio::test]
async fn a_second_check_asks_the_registries_nothing_they_answered_before() {
    let (bench, _) = setup();
    let args = json!({"text": "10.1101/097196\n10.1371/journal.pone.0033693\n10.5555/unknown.1"});
    let first = ok(&check(&bench, args.clone()).await).clone();
    let again = ok(&check(&bench, args).await).clone();
    // The first: the library, then CrossRef for each and DataCite after CrossRef's 404. The second: the library's
    // version check only, and the same answer.
    assert!(first["requests"].as_u64().unwrap() >= 5, "{first}");
    assert_eq!(again["requests"], 1, "{again}");
    assert_eq!(again["references"], first["references"]);
}

#[tokio::test]
async fn zotero_s_own_citation_key_field_matches_as_better_bibtex_s_line_does() {
    let (bench, _) = setup();
    let key = bench.sim.insert_item(
        LIB,
        json!({"itemType": "journalArticle", "title": "An item keyed by Zotero itself", "citationKey": "Native2024Key"}),
    );
    let out =
        ok(&check(&bench, json!({"text": "As shown \\cite{native2024key}.", "checkRegistry": false})).await).clone();
    let found = &out["references"][0];
    assert_eq!((found["itemKey"].as_str(), found["matchedBy"].as_str()), (Some(key.as_str()), Some("citationKey")));
}

/// `count` small journal articles, as a large library has.
fn grow(bench: &Bench, count: usize, prefix: &str) {
    for n in 0..count {
        bench.sim.insert_item(
            LIB,
            json!({"itemType": "journalArticle", "title": format!("{prefix} filler article number {n}"), "date": "2020"}),
        );
    }
}

#[tokio::test]
async fn a_large_library_is_read_over_several_calls_and_read_afresh_after_many_changes() {
    let (bench, _) = setup();
    grow(&bench, 3800, "Early");
    let args = json!({"text": "10.1038/s41592-021-01187-3", "checkRegistry": false});
    let first = ok(&check(&bench, args.clone()).await).clone();
    assert!(first["stopped"].as_str().unwrap().contains("being read"), "{first}");
    assert_eq!(first["references"], json!([]));
    assert!(first["requests"].as_u64().unwrap() <= 45);
    let mut carry_on = args.clone();
    carry_on["cursor"] = first["nextCursor"].clone();
    let second = ok(&check(&bench, carry_on).await).clone();
    assert_eq!(second["references"][0]["itemKey"], "T6W7H8UE", "{second}");
    assert_eq!(second["libraryItems"], 3800 + 43);

    // More changed since than one call can fetch by key: the library is read again from the start.
    grow(&bench, 2000, "Later");
    let third = ok(&check(&bench, args.clone()).await).clone();
    assert!(third["stopped"].as_str().unwrap().contains("being read"), "{third}");
    let mut calls = 0;
    let mut last = third;
    while last.get("stopped").is_some() {
        let mut carry_on = args.clone();
        carry_on["cursor"] = last["nextCursor"].clone();
        last = ok(&check(&bench, carry_on).await).clone();
        calls += 1;
        assert!(calls <= 3, "{last}");
    }
    assert_eq!(last["libraryItems"], 5800 + 43);
    assert_eq!(last["references"][0]["itemKey"], "T6W7H8UE");
}

#[tokio::test]
async fn a_manuscript_over_a_limit_is_refused_naming_it_before_any_request() {
    let (bench, _) = setup();
    let before = bench.sim.requests().len();
    let identifiers: String = (0..=5_000).map(|n| format!("10.1000/x.{n}\n")).collect();
    let refused = check(&bench, json!({"text": identifiers, "checkRegistry": false})).await;
    let message = error_text(&refused);
    assert!(message.contains("more than 5,000 references") && message.contains("split it"), "{message}");

    let keys = (0..=20_000).map(|n| format!("k{n}")).collect::<Vec<_>>().join(",");
    let refused = check(&bench, json!({"text": format!("See \\cite{{{keys}}}."), "checkRegistry": false})).await;
    let message = error_text(&refused);
    assert!(message.contains("more than 20,000 citations") && message.contains("split it"), "{message}");

    let bib: String = (0..=5_000).map(|n| format!("@misc{{k{n}, title = {{Work {n}}}}}\n")).collect();
    let args = json!({"text": "See \\cite{k1}.", "bibtex": bib, "checkRegistry": false});
    let message = error_text(&check(&bench, args).await);
    assert!(message.contains("more than 5,000 entries") && message.contains("only the entries"), "{message}");
    assert_eq!(bench.sim.requests().len(), before, "nothing was asked of Zotero");
}

#[tokio::test]
async fn one_work_under_many_labels_names_ten_of_them_and_counts_the_rest() {
    let (bench, _) = setup();
    // Fifteen spellings of one DOI (its case changes nothing), each a reference of its own.
    let spellings: Vec<String> = (0..15u32)
        .map(|n| {
            let suffix: String = "abcd"
                .chars()
                .enumerate()
                .map(|(i, c)| if n >> i & 1 == 1 { c.to_ascii_uppercase() } else { c })
                .collect();
            format!("10.1000/{suffix}")
        })
        .collect();
    let out =
        ok(&check(&bench, json!({"text": spellings.join("\n"), "checkRegistry": false, "limit": 1})).await).clone();
    let reference = &out["references"][0];
    let duplicate: Vec<&Value> =
        reference["flags"].as_array().unwrap().iter().filter(|f| f["kind"] == "duplicateCitation").collect();
    assert_eq!(duplicate.len(), 1, "{reference:#}");
    let detail = duplicate[0]["detail"].as_str().unwrap();
    assert!(detail.starts_with("the same work is also cited as 10.1000/Abcd, 10.1000/aBcd"), "{detail}");
    assert!(detail.ends_with(" … and 4 more") && detail.matches("10.1000/").count() == 10, "{detail}");
}

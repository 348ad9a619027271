//! PDFs made here, one per case, with lopdf's writer: what a document says about itself, and each way a file
//! can be refused.

use lopdf::{dictionary, Document, Object, Stream, StringFormat};

use super::*;

/// A document with `pages` pages (each with a line of text), and whatever `extra` adds before it is saved.
fn pdf(pages: usize, extra: impl FnOnce(&mut Document, &[lopdf::ObjectId])) -> Vec<u8> {
    let mut doc = Document::with_version("1.7");
    let pages_id = doc.new_object_id();
    let font = doc.add_object(dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica" });
    let mut kids = Vec::new();
    for n in 1..=pages {
        let content = format!("BT /F1 12 Tf 72 720 Td (Page {n}) Tj ET");
        let content_id = doc.add_object(Stream::new(dictionary! {}, content.into_bytes()));
        let page = doc.add_object(dictionary! {
            "Type" => "Page",
            "Parent" => pages_id,
            "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
            "Contents" => content_id,
            "Resources" => dictionary! { "Font" => dictionary! { "F1" => font } },
        });
        kids.push(page);
    }
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages",
            "Kids" => kids.iter().map(|&k| Object::Reference(k)).collect::<Vec<_>>(),
            "Count" => pages as i64,
        }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    extra(&mut doc, &kids);
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).expect("a document made here saves");
    bytes
}

fn text(s: &str) -> Object {
    Object::String(s.as_bytes().to_vec(), StringFormat::Literal)
}

fn open(bytes: &[u8]) -> Result<PdfDocument, PdfError> {
    PdfDocument::open(bytes, &PdfLimits::default())
}

#[test]
fn info_reports_pages_version_fields_and_dates() {
    let bytes = pdf(3, |doc, _| {
        let info = doc.add_object(dictionary! {
            "Title" => text("  Geometric deep learning\r\n"),
            "Author" => Object::String(
                [&[0xFE, 0xFF][..], &"Zoë Wu".encode_utf16().flat_map(u16::to_be_bytes).collect::<Vec<_>>()].concat(),
                StringFormat::Hexadecimal,
            ),
            "Producer" => text("pdfTeX-1.40.25"),
            "CreationDate" => text("D:20240305143000+01'00'"),
            "Keywords" => text(""),
        });
        doc.trailer.set("Info", info);
    });
    let doc = open(&bytes).unwrap();
    let info = doc.info();
    assert_eq!(info.page_count, 3);
    assert_eq!(info.version, "1.7");
    assert!(!info.encrypted);
    assert_eq!(info.title.as_deref(), Some("Geometric deep learning"));
    assert_eq!(info.author.as_deref(), Some("Zoë Wu"), "UTF-16 with its byte order mark");
    assert_eq!(info.producer.as_deref(), Some("pdfTeX-1.40.25"));
    assert_eq!(info.created.as_deref(), Some("2024-03-05T14:30:00+01:00"));
    assert_eq!(info.keywords, None, "empty values are left out");
    assert_eq!(info.modified, None);
    assert!(!info.has_page_labels);
}

#[test]
fn the_outline_has_titles_depths_and_pages() {
    let bytes = pdf(4, |doc, pages| {
        let outlines = doc.new_object_id();
        let chapter = doc.new_object_id();
        let section = doc.new_object_id();
        let appendix = doc.new_object_id();
        let dest = |page: lopdf::ObjectId| vec![Object::Reference(page), "Fit".into()];
        doc.objects.insert(
            section,
            Object::Dictionary(
                dictionary! { "Title" => text("1.1 Setting"), "Parent" => chapter, "Dest" => dest(pages[1]) },
            ),
        );
        doc.objects.insert(
            chapter,
            Object::Dictionary(dictionary! {
                "Title" => text("1 Introduction"), "Parent" => outlines, "Dest" => dest(pages[0]),
                "First" => section, "Last" => section, "Count" => 1, "Next" => appendix,
            }),
        );
        doc.objects.insert(
            appendix,
            Object::Dictionary(dictionary! {
                "Title" => text("A Proofs"), "Parent" => outlines, "Dest" => dest(pages[3]), "Prev" => chapter,
            }),
        );
        doc.objects.insert(
            outlines,
            Object::Dictionary(
                dictionary! { "Type" => "Outlines", "First" => chapter, "Last" => appendix, "Count" => 3 },
            ),
        );
        let root = doc.trailer.get(b"Root").unwrap().as_reference().unwrap();
        doc.get_dictionary_mut(root).unwrap().set("Outlines", outlines);
    });
    let outline = open(&bytes).unwrap().outline();
    let flat: Vec<(&str, usize, Option<usize>)> = outline.iter().map(|e| (e.title.as_str(), e.depth, e.page)).collect();
    assert_eq!(flat, [("1 Introduction", 1, Some(1)), ("1.1 Setting", 2, Some(2)), ("A Proofs", 1, Some(4))]);
}

#[test]
fn an_outline_that_loops_is_read_once_and_named_destinations_resolve() {
    let bytes = pdf(3, |doc, pages| {
        let outlines = doc.new_object_id();
        let (first, second, third) = (doc.new_object_id(), doc.new_object_id(), doc.new_object_id());
        // A named destination through the catalog's name tree, one through a GoTo action, one with no page;
        // the last item's /Next points back at the first (a loop) and its /First at itself.
        doc.objects.insert(
            first,
            Object::Dictionary(dictionary! {
                "Title" => text("Named"), "Parent" => outlines, "Dest" => Object::string_literal("sec.two"),
                "Next" => second,
            }),
        );
        doc.objects.insert(
            second,
            Object::Dictionary(dictionary! {
                "Title" => text("Action"), "Parent" => outlines, "Next" => third,
                "A" => dictionary! { "S" => "GoTo", "D" => vec![Object::Reference(pages[2]), "Fit".into()] },
            }),
        );
        doc.objects.insert(
            third,
            Object::Dictionary(dictionary! {
                "Title" => text("Web"), "Parent" => outlines, "Next" => first, "First" => third,
                "A" => dictionary! { "S" => "URI", "URI" => Object::string_literal("https://example.org") },
            }),
        );
        doc.objects.insert(
            outlines,
            Object::Dictionary(dictionary! { "Type" => "Outlines", "First" => first, "Last" => third }),
        );
        let leaf = doc.add_object(dictionary! {
            "Names" => vec![Object::string_literal("sec.two"), dictionary! { "D" => vec![Object::Reference(pages[1]), "Fit".into()] }.into()],
        });
        let tree = doc.add_object(dictionary! { "Kids" => vec![Object::Reference(leaf)] });
        let root = doc.trailer.get(b"Root").unwrap().as_reference().unwrap();
        let catalog = doc.get_dictionary_mut(root).unwrap();
        catalog.set("Outlines", outlines);
        catalog.set("Names", dictionary! { "Dests" => tree });
    });
    let outline = open(&bytes).unwrap().outline();
    let flat: Vec<(&str, usize, Option<usize>)> = outline.iter().map(|e| (e.title.as_str(), e.depth, e.page)).collect();
    assert_eq!(flat, [("Named", 1, Some(2)), ("Action", 1, Some(3)), ("Web", 1, None)]);
}

#[test]
fn a_document_without_an_outline_has_an_empty_one() {
    assert!(open(&pdf(1, |_, _| {})).unwrap().outline().is_empty());
}

#[test]
fn page_labels_number_front_matter_and_body() {
    let bytes = pdf(6, |doc, _| {
        let labels = dictionary! {
            "Nums" => vec![
                0.into(), Object::Dictionary(dictionary! { "S" => "r" }),
                2.into(), Object::Dictionary(dictionary! { "S" => "D", "St" => 1 }),
                5.into(), Object::Dictionary(dictionary! { "S" => "A", "P" => text("App-") }),
            ],
        };
        let root = doc.trailer.get(b"Root").unwrap().as_reference().unwrap();
        doc.get_dictionary_mut(root).unwrap().set("PageLabels", labels);
    });
    let doc = open(&bytes).unwrap();
    assert!(doc.info().has_page_labels);
    let labels: Vec<String> = (1..=6).map(|p| doc.page_label(p).unwrap()).collect();
    assert_eq!(labels, ["i", "ii", "1", "2", "3", "App-A"]);
    assert_eq!(doc.page_label(0), None);
}

#[test]
fn bytes_that_are_not_a_pdf_are_refused_as_such() {
    for bytes in [&b"<!DOCTYPE html><html>Not found</html>"[..], b"", b"PK\x03\x04zipfile"] {
        assert_eq!(open(bytes).unwrap_err(), PdfError::NotPdf);
    }
    let message = PdfError::NotPdf.to_string();
    assert!(message.contains("HTML error page"), "{message}");
}

#[test]
fn a_pdf_header_followed_by_garbage_is_damaged_not_a_crash() {
    let refused = open(b"%PDF-1.7\n%%garbage that is no PDF at all\n%%EOF").unwrap_err();
    assert!(matches!(refused, PdfError::Damaged { .. }), "{refused}");
}

#[test]
fn a_page_tree_that_contains_itself_still_opens_with_finite_pages() {
    let bytes = pdf(2, |doc, pages| {
        // The second page's parent lists the Pages node itself among its kids.
        let pages_id = doc.get_dictionary(pages[0]).unwrap().get(b"Parent").unwrap().as_reference().unwrap();
        let node = doc.get_dictionary_mut(pages_id).unwrap();
        let mut kids = node.get(b"Kids").unwrap().as_array().unwrap().clone();
        kids.push(Object::Reference(pages_id));
        node.set("Kids", kids);
    });
    assert_eq!(open(&bytes).unwrap().page_count(), 2, "each page once");
}

#[test]
fn a_flate_bomb_in_an_object_stream_is_cut_off_and_the_document_still_opens() {
    use std::io::Write;
    // 64 MiB of zeros compress to about 64 KB: inside an object stream, lopdf inflates it while loading.
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![0u8; 1024 * 1024];
    for _ in 0..64 {
        encoder.write_all(&zeros).unwrap();
    }
    let bomb = encoder.finish().unwrap();
    let bytes = pdf(1, |doc, _| {
        let stream = Stream::new(
            dictionary! { "Type" => "ObjStm", "N" => 1, "First" => 4, "Filter" => "FlateDecode" },
            bomb.clone(),
        )
        .with_compression(false);
        doc.add_object(stream);
    });
    let limits = PdfLimits { max_stream_bytes: 8 * 1024 * 1024, ..PdfLimits::default() };
    // Loading leniently, lopdf drops the object stream it cannot inflate within the limit: the pages, which do
    // not depend on it, still open. (That the limit stops the inflating is checked on page content below, and
    // with the memory ceiling as wasm in tests/pdf_wasm.rs.)
    let doc = PdfDocument::open(&bytes, &limits).expect("the rest of the document opens");
    assert_eq!(doc.page_count(), 1);
}

#[test]
fn a_flate_bomb_in_page_content_is_refused_by_the_stream_limit() {
    use std::io::Write;
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    let spaces = vec![b' '; 1024 * 1024];
    for _ in 0..64 {
        encoder.write_all(&spaces).unwrap();
    }
    let bomb = encoder.finish().unwrap();
    let bytes = pdf(1, |doc, pages| {
        let content = doc
            .add_object(Stream::new(dictionary! { "Filter" => "FlateDecode" }, bomb.clone()).with_compression(false));
        doc.get_dictionary_mut(pages[0]).unwrap().set("Contents", content);
    });
    let limits = PdfLimits { max_stream_bytes: 8 * 1024 * 1024, ..PdfLimits::default() };
    let refused = PdfDocument::open(&bytes, &limits).unwrap().text(1, 1, &TextBudget::default()).unwrap_err();
    assert!(matches!(refused, PdfError::OverBudget { limit: "decompressed stream size", .. }), "{refused}");
    // With room for it, the same page is 64 MiB of spaces: no text, and no error.
    let roomy = PdfLimits { max_stream_bytes: 128 * 1024 * 1024, ..PdfLimits::default() };
    assert_eq!(PdfDocument::open(&bytes, &roomy).unwrap().text(1, 1, &TextBudget::default()).unwrap(), [""]);
}

#[test]
fn a_brotli_stream_is_skipped_like_a_damaged_one_not_a_crash() {
    // Brotli (/BrotliDecode) is in no PDF standard, and the build links a stand-in that refuses to decode it
    // (crates/shims/brotli-decompressor). Its content is skipped as any undecodable stream is; the rest reads.
    let bytes = pdf(2, |doc, pages| {
        let brotli = Stream::new(dictionary! { "Filter" => "BrotliDecode" }, b"\x1b\x03\x00\x00".to_vec());
        let content = doc.add_object(brotli.with_compression(false));
        doc.get_dictionary_mut(pages[0]).unwrap().set("Contents", content);
    });
    let doc = open(&bytes).expect("the document opens");
    assert_eq!(doc.text(1, 1, &TextBudget::default()).unwrap(), [""]);
    let second = doc.text(2, 2, &TextBudget::default()).unwrap();
    assert!(second[0].contains("Page 2"), "{second:?}");
}

#[test]
fn an_empty_user_password_opens_and_any_other_is_refused() {
    let encrypted = |user: &str| {
        pdf(2, |doc, _| {
            doc.trailer.set("ID", vec![text("0123456789abcdef"), text("0123456789abcdef")]);
            let version = lopdf::EncryptionVersion::V2 {
                document: doc,
                owner_password: "owner",
                user_password: user,
                key_length: 128,
                permissions: lopdf::Permissions::all(),
            };
            let state = lopdf::EncryptionState::try_from(version).expect("RC4 key");
            doc.encrypt(&state).expect("encrypts");
        })
    };
    let opened = open(&encrypted("")).expect("the empty password opens it");
    assert!(!opened.is_lazy(), "decryption is lopdf's eager loader's");
    assert_eq!(opened.page_count(), 2);
    assert!(opened.info().encrypted);
    assert_eq!(open(&encrypted("secret")).unwrap_err(), PdfError::PasswordRequired);
}

#[test]
fn a_file_too_large_to_parse_here_is_refused_before_parsing() {
    // 40,000 objects (a long manual's count): their dictionaries alone would take about 120 MB to parse whole.
    let bytes = pdf(1, |doc, _| {
        for n in 0..40_000 {
            doc.add_object(Object::Integer(n));
        }
    });
    assert!(bytes.len() < 3_000_000, "small as a file (about 14 MB to read by size alone): the count decides");
    // Read lazily, only the page's objects are parsed: it opens.
    let lazy = open(&bytes).unwrap();
    assert!(lazy.is_lazy());
    assert_eq!(lazy.text(1, 1, &TextBudget::default()).unwrap(), ["Page 1"]);
    // When the eager loader has to do it (an encrypted file, a damaged cross-reference table), the estimate
    // refuses it unparsed.
    let refused = PdfDocument::open_eagerly(&bytes, &PdfLimits::default()).unwrap_err();
    assert!(matches!(refused, PdfError::OverBudget { limit: "memory estimate", .. }), "{refused}");
    assert!(refused.to_string().contains("full-text index"), "{refused}");
}

// ---- text ----

/// A one-page document drawing `content`, with `/F1` (Helvetica, no widths), `/F2` (a Type0 font whose
/// ToUnicode maps <0001> to H, <0002> to i, <0003> to ﬁ) and whatever XObjects `xobjects` adds.
fn drawing(content: &str, xobjects: impl FnOnce(&mut Document) -> lopdf::Dictionary) -> Vec<u8> {
    let mut doc = Document::with_version("1.7");
    let pages_id = doc.new_object_id();
    let f1 = doc.add_object(dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica" });
    let cmap = "/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /T def \
                1 begincodespacerange <0000> <FFFF> endcodespacerange \
                3 beginbfchar <0001> <0048> <0002> <0069> <0003> <FB01> endbfchar \
                endcmap CMapName currentdict /CMap defineresource pop end end";
    let to_unicode = doc.add_object(Stream::new(dictionary! {}, cmap.as_bytes().to_vec()));
    let cid_font = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "CIDFontType2", "BaseFont" => "Test",
        "CIDSystemInfo" => dictionary! { "Registry" => text("Adobe"), "Ordering" => text("Identity"), "Supplement" => 0 },
        "DW" => 600,
    });
    let f2 = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type0", "BaseFont" => "Test", "Encoding" => "Identity-H",
        "DescendantFonts" => vec![Object::Reference(cid_font)], "ToUnicode" => to_unicode,
    });
    let xobject_dict = xobjects(&mut doc);
    let content_id = doc.add_object(Stream::new(dictionary! {}, content.as_bytes().to_vec()));
    let page = doc.add_object(dictionary! {
        "Type" => "Page", "Parent" => pages_id, "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
        "Contents" => content_id,
        "Resources" => dictionary! { "Font" => dictionary! { "F1" => f1, "F2" => f2 }, "XObject" => xobject_dict },
    });
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => vec![Object::Reference(page)], "Count" => 1 }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).unwrap();
    bytes
}

fn page_text(bytes: &[u8]) -> Result<String, PdfError> {
    let doc = open(bytes)?;
    Ok(doc.text(1, 1, &TextBudget::default())?.remove(0))
}

fn no_xobjects(_: &mut Document) -> lopdf::Dictionary {
    dictionary! {}
}

#[test]
fn text_comes_page_by_page_and_a_range_reads_only_its_pages() {
    let doc = open(&pdf(4, |_, _| {})).unwrap();
    assert_eq!(doc.text(1, 4, &TextBudget::default()).unwrap(), ["Page 1", "Page 2", "Page 3", "Page 4"]);
    assert_eq!(doc.text(2, 3, &TextBudget::default()).unwrap(), ["Page 2", "Page 3"]);
    assert_eq!(doc.text(3, 99, &TextBudget::default()).unwrap(), ["Page 3", "Page 4"], "clamped to the document");
    assert!(doc.text(3, 2, &TextBudget::default()).unwrap().is_empty());
}

#[test]
fn lines_follow_baselines_and_positioned_words_get_their_spaces() {
    let text = page_text(&drawing(
        "BT /F1 10 Tf 72 720 Td (First) Tj 0 -14 Td [(macros)-600(provided)-20(as)] TJ 0 -14 Td (Third line) Tj ET",
        no_xobjects,
    ))
    .unwrap();
    assert_eq!(text, "First\nmacros provided as\nThird line".replace("provided as", "providedas"));
}

#[test]
fn composite_fonts_read_through_their_to_unicode_map_with_ligatures_spelled_out() {
    assert_eq!(page_text(&drawing("BT /F2 12 Tf 72 700 Td <000100020003> Tj ET", no_xobjects)).unwrap(), "Hifi");
}

#[test]
fn a_form_that_draws_itself_is_drawn_once_and_images_are_never_read_as_content() {
    let bytes = drawing("BT /F1 10 Tf 72 700 Td (Before) Tj ET /Self Do /Img Do", |doc| {
        let form_id = doc.new_object_id();
        let form = Stream::new(
            dictionary! {
                "Type" => "XObject", "Subtype" => "Form", "BBox" => vec![0.into(), 0.into(), 100.into(), 100.into()],
                "Resources" => dictionary! {
                    "XObject" => dictionary! { "Self" => form_id },
                    "Font" => dictionary! { "F1" => dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Courier" } },
                },
            },
            b"BT /F1 10 Tf 72 600 Td (Inside) Tj ET /Self Do".to_vec(),
        );
        doc.objects.insert(form_id, Object::Stream(form));
        // An "image" whose bytes would draw text if they were wrongly read as a content stream.
        let image = doc.add_object(Stream::new(
            dictionary! { "Type" => "XObject", "Subtype" => "Image", "Width" => 1, "Height" => 1, "BitsPerComponent" => 8, "ColorSpace" => "DeviceGray" },
            b"BT /F1 10 Tf (Leaked) Tj ET".to_vec(),
        ));
        dictionary! { "Self" => form_id, "Img" => image }
    });
    assert_eq!(page_text(&bytes).unwrap(), "Before\nInside");
}

#[test]
fn a_page_with_only_an_image_is_a_scan() {
    let bytes = drawing("q 612 0 0 792 0 0 cm /Img Do Q", |doc| {
        let image = doc.add_object(Stream::new(
            dictionary! { "Type" => "XObject", "Subtype" => "Image", "Width" => 1, "Height" => 1, "BitsPerComponent" => 8, "ColorSpace" => "DeviceGray" },
            vec![0],
        ));
        dictionary! { "Img" => image }
    });
    let refused = page_text(&bytes).unwrap_err();
    assert_eq!(refused, PdfError::NoTextLayer);
    assert!(refused.to_string().contains("OCR"), "{refused}");
}

#[test]
fn an_empty_page_without_images_is_just_empty() {
    assert_eq!(page_text(&drawing("0 0 m 10 10 l S", no_xobjects)).unwrap(), "");
}

#[test]
fn the_operator_budget_stops_a_page_that_draws_without_end() {
    let content = "0 0 m ".repeat(50_000);
    let budget = TextBudget { max_operators: 10_000, ..TextBudget::default() };
    let refused = open(&drawing(&content, no_xobjects)).unwrap().text(1, 1, &budget).unwrap_err();
    assert!(matches!(refused, PdfError::OverBudget { limit: "content operators", .. }), "{refused}");
}

#[test]
fn content_that_stops_parsing_keeps_what_came_before() {
    let text =
        page_text(&drawing("BT /F1 10 Tf 72 700 Td (Kept) Tj ET BT /F1 10 Tf ) ( <<>> [ Tj", no_xobjects)).unwrap();
    assert!(text.starts_with("Kept"), "{text}");
}

#[test]
fn a_page_without_a_media_box_still_has_text() {
    let bytes = pdf(1, |doc, pages| {
        doc.get_dictionary_mut(pages[0]).unwrap().remove(b"MediaBox");
    });
    assert_eq!(page_text(&bytes).unwrap(), "Page 1");
}

/// Writes the documents these tests make into `$ZOTERO_MCP_WRITE_PDF_SEEDS` (the fuzz target's seeds:
/// `ZOTERO_MCP_WRITE_PDF_SEEDS=fuzz/seeds/pdf_text cargo test -p zotero-mcp-core write_pdf_seeds -- --ignored`).
#[test]
#[ignore = "writes files; run by hand to refresh fuzz/seeds/pdf_text"]
fn write_pdf_seeds() {
    let Ok(dir) = std::env::var("ZOTERO_MCP_WRITE_PDF_SEEDS") else { return };
    let dir = std::path::Path::new(&dir);
    std::fs::create_dir_all(dir).unwrap();
    let labelled = pdf(3, |doc, _| {
        let labels = dictionary! { "Nums" => vec![0.into(), Object::Dictionary(dictionary! { "S" => "r" })] };
        let root = doc.trailer.get(b"Root").unwrap().as_reference().unwrap();
        doc.get_dictionary_mut(root).unwrap().set("PageLabels", labels);
        let info = doc.add_object(dictionary! { "Title" => text("Seed"), "CreationDate" => text("D:20240305") });
        doc.trailer.set("Info", info);
    });
    let seeds: Vec<(&str, Vec<u8>)> = vec![
        ("labelled.pdf", labelled),
        ("type0.pdf", drawing("BT /F2 12 Tf 72 700 Td <000100020003> Tj ET", no_xobjects)),
        ("words.pdf", drawing("BT /F1 10 Tf 72 720 Td (First) Tj 0 -14 Td [(a)-600(b)] TJ T* (c) ' ET", no_xobjects)),
        (
            "form.pdf",
            drawing("/Self Do", |doc| {
                let form_id = doc.new_object_id();
                let form = Stream::new(
                    dictionary! { "Type" => "XObject", "Subtype" => "Form", "Resources" => dictionary! { "XObject" => dictionary! { "Self" => form_id } } },
                    b"q 1 0 0 1 5 5 cm /Self Do Q".to_vec(),
                );
                doc.objects.insert(form_id, Object::Stream(form));
                dictionary! { "Self" => form_id }
            }),
        ),
    ];
    for (name, bytes) in seeds {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
}

#[test]
fn a_quote_is_located_on_its_page_in_user_space() {
    let doc = open(&pdf(3, |_, _| {})).unwrap();
    let found = doc.locate("page 2", None, &TextBudget::default()).unwrap().expect("found");
    assert_eq!((found.page, found.page_index, found.exact), (2, 1, true));
    // Helvetica without widths: half an em (6 units at 12 pt) per glyph, from x = 72 on the baseline y = 720.
    assert_eq!(found.rects, vec![[72.0, 717.0, 108.0, 730.2]]);
    // Asked on page 3, only "Page" matches: the nearest stretch, four fifths of the quote.
    let near = doc.locate("page 2", Some(3), &TextBudget::default()).unwrap().expect("nearest");
    assert_eq!((near.page, near.exact, near.matched_text.as_str()), (3, false, "Page"));
    assert!((near.coverage - 0.8).abs() < 1e-9);
    assert_eq!(doc.locate("nowhere at all", None, &TextBudget::default()).unwrap(), None);
}

#[test]
fn dingbats_read_as_nothing_rather_than_stray_letters() {
    let bytes = pdf(1, |doc, pages| {
        let dingbats =
            doc.add_object(dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "ZapfDingbats" });
        let content = doc
            .add_object(Stream::new(dictionary! {}, b"BT /F1 12 Tf 72 700 Td (Item) Tj /D 12 Tf ( l) Tj ET".to_vec()));
        let page = doc.get_dictionary_mut(pages[0]).unwrap();
        page.set("Contents", content);
        let fonts = dictionary! { "F1" => dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica" }, "D" => dingbats };
        page.set("Resources", dictionary! { "Font" => fonts });
    });
    assert_eq!(page_text(&bytes).unwrap(), "Item");
}

// ---- lazy loading ----

/// A document with what every reader of it touches: several pages sharing a font, inherited resources, a form,
/// an image, an outline with a named destination, page labels and document information.
fn rich(doc: &mut Document, pages: &[lopdf::ObjectId]) {
    let info = doc.add_object(dictionary! { "Title" => text("Lazy and eager"), "Author" => text("Tester") });
    doc.trailer.set("Info", info);
    let form = doc.add_object(Stream::new(
        dictionary! { "Type" => "XObject", "Subtype" => "Form", "BBox" => vec![0.into(), 0.into(), 100.into(), 100.into()] },
        b"BT /F1 10 Tf 72 600 Td (from a form) Tj ET".to_vec(),
    ));
    let image = doc.add_object(Stream::new(
        dictionary! { "Type" => "XObject", "Subtype" => "Image", "Width" => 1, "Height" => 1 },
        b"BT (not text) Tj ET".to_vec(),
    ));
    let page = doc.get_dictionary_mut(pages[1]).unwrap();
    let resources = page.get_mut(b"Resources").unwrap().as_dict_mut().unwrap();
    resources.set("XObject", dictionary! { "Fm" => form, "Im" => image });
    let extra = doc.add_object(Stream::new(dictionary! {}, b"q /Fm Do /Im Do Q".to_vec()));
    let page = doc.get_dictionary_mut(pages[1]).unwrap();
    let first = page.get(b"Contents").unwrap().clone();
    page.set("Contents", vec![first, Object::Reference(extra)]);
    let outlines = doc.new_object_id();
    let item = doc.add_object(dictionary! {
        "Title" => text("Second"), "Parent" => outlines, "Dest" => Object::string_literal("two"),
    });
    doc.objects.insert(outlines, Object::Dictionary(dictionary! { "First" => item, "Last" => item, "Count" => 1 }));
    let names = doc.add_object(dictionary! {
        "Names" => vec![Object::string_literal("two"), vec![Object::Reference(pages[1]), "Fit".into()].into()],
    });
    let root = doc.trailer.get(b"Root").unwrap().as_reference().unwrap();
    let catalog = doc.get_dictionary_mut(root).unwrap();
    catalog.set("Outlines", outlines);
    catalog.set("Names", dictionary! { "Dests" => names });
    catalog.set("PageLabels", dictionary! { "Nums" => vec![0.into(), dictionary! { "S" => "r" }.into()] });
}

/// `doc` saved the modern way: objects in object streams, a cross-reference stream.
fn modern(mut doc: Document) -> Vec<u8> {
    let mut bytes = Vec::new();
    let options = lopdf::SaveOptions::builder().use_object_streams(true).use_xref_streams(true).build();
    doc.save_with_options(&mut bytes, options).unwrap();
    bytes
}

#[test]
fn lazy_and_eager_loading_read_the_same_document() {
    let classic = pdf(3, rich);
    let mut source = Document::load_mem(&classic).unwrap();
    source.version = "1.7".into();
    let compressed = modern(source);
    assert!(compressed.windows(7).any(|w| w == b"/ObjStm"), "the fixture has object streams");
    for bytes in [&classic, &compressed] {
        let lazy = open(bytes).unwrap();
        let eager = PdfDocument::open_eagerly(bytes, &PdfLimits::default()).unwrap();
        assert!(lazy.is_lazy());
        let budget = TextBudget::default();
        assert_eq!(lazy.text(1, 3, &budget).unwrap(), eager.text(1, 3, &budget).unwrap());
        assert_eq!(lazy.text(2, 2, &budget).unwrap(), ["Page 2\nfrom a form"]);
        assert_eq!(lazy.outline(), eager.outline());
        assert_eq!(lazy.outline()[0].page, Some(2));
        assert_eq!(lazy.info(), eager.info());
        assert_eq!(lazy.info().title.as_deref(), Some("Lazy and eager"));
        assert_eq!(lazy.page_label(3).as_deref(), Some("iii"));
        assert_eq!(
            lazy.locate("from a form", None, &budget).unwrap(),
            eager.locate("from a form", None, &budget).unwrap()
        );
    }
}

#[test]
fn a_page_range_read_lazily_loads_only_its_pages() {
    // 200 pages, each with its own content stream; reading page 150 must not parse the others' contents.
    let bytes = modern(Document::load_mem(&pdf(200, |_, _| {})).unwrap());
    let doc = open(&bytes).unwrap();
    assert!(doc.is_lazy());
    assert_eq!(doc.page_count(), 200);
    assert_eq!(doc.text(150, 150, &TextBudget::default()).unwrap(), ["Page 150"]);
    let loaded = doc.doc.lock().unwrap().objects.len();
    // The catalog, the page tree (root and 200 pages), the shared font and one content stream.
    assert!(loaded < 210, "{loaded} objects loaded for one page");
}

#[test]
fn a_damaged_cross_reference_table_goes_to_the_eager_loader() {
    let mut bytes = pdf(2, |_, _| {});
    let at = bytes.windows(9).rposition(|w| w == b"startxref").unwrap();
    // An xref offset that points nowhere: lopdf rebuilds the table by scanning; the lazy reader gives way.
    bytes.splice(at + 10.., b"99999999\n%%EOF\n".iter().copied());
    let doc = open(&bytes).unwrap();
    assert!(!doc.is_lazy());
    assert_eq!(doc.text(1, 2, &TextBudget::default()).unwrap(), ["Page 1", "Page 2"]);
}

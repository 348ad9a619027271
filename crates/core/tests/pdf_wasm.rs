//! The PDF engine as WebAssembly in V8 (the engine family of Workers): the cases of `src/pdf/tests.rs` that
//! matter most, run by `wasm-bindgen-test-runner` in Node (`make test` runs this file as wasm; natively it is
//! empty). Each case also checks the wasm linear memory: it never shrinks, so its size after the run is the peak,
//! and it must stay inside what a Workers isolate can spare.
#![cfg(target_arch = "wasm32")]

use std::io::Write;

use lopdf::{dictionary, Document, Object, Stream};
use wasm_bindgen_test::wasm_bindgen_test;
use zotero_mcp_core::pdf::{PdfDocument, PdfError, PdfLimits, TextBudget};

/// The most linear memory any case may leave behind (a Workers isolate has 128 MB in all).
const MEMORY_CEILING: usize = 96 * 1024 * 1024;

fn linear_memory() -> usize {
    core::arch::wasm32::memory_size::<0>() * 65_536
}

fn save(mut doc: Document) -> Vec<u8> {
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).expect("saves");
    bytes
}

/// `pages` pages of "Page n" in Helvetica, plus whatever `extra` adds.
fn pdf(pages: usize, extra: impl FnOnce(&mut Document, &[lopdf::ObjectId])) -> Vec<u8> {
    let mut doc = Document::with_version("1.7");
    let pages_id = doc.new_object_id();
    let font = doc.add_object(dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica" });
    let mut kids = Vec::new();
    for n in 1..=pages {
        let content = doc
            .add_object(Stream::new(dictionary! {}, format!("BT /F1 12 Tf 72 720 Td (Page {n}) Tj ET").into_bytes()));
        kids.push(doc.add_object(dictionary! {
            "Type" => "Page", "Parent" => pages_id, "Contents" => content,
            "Resources" => dictionary! { "Font" => dictionary! { "F1" => font } },
        }));
    }
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => kids.iter().map(|&k| Object::Reference(k)).collect::<Vec<_>>(), "Count" => pages as i64,
        }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    extra(&mut doc, &kids);
    save(doc)
}

#[wasm_bindgen_test]
fn text_and_quotes_come_out_as_natively() {
    let doc = PdfDocument::open(&pdf(3, |_, _| {}), &PdfLimits::default()).unwrap();
    assert_eq!(doc.text(1, 3, &TextBudget::default()).unwrap(), ["Page 1", "Page 2", "Page 3"]);
    let found = doc.locate("page 2", None, &TextBudget::default()).unwrap().unwrap();
    assert_eq!((found.page, found.rects.clone()), (2, vec![[72.0, 717.0, 108.0, 730.2]]));
    assert!(linear_memory() <= MEMORY_CEILING, "{} bytes", linear_memory());
}

#[wasm_bindgen_test]
fn a_form_that_draws_itself_does_not_overflow_the_stack() {
    let bytes = pdf(1, |doc, pages| {
        let form_id = doc.new_object_id();
        let form = Stream::new(
            dictionary! { "Type" => "XObject", "Subtype" => "Form", "Resources" => dictionary! { "XObject" => dictionary! { "X" => form_id } } },
            b"/X Do".to_vec(),
        );
        doc.objects.insert(form_id, Object::Stream(form));
        let content =
            doc.add_object(Stream::new(dictionary! {}, b"/X Do BT /F1 12 Tf 72 720 Td (After) Tj ET".to_vec()));
        let page = doc.get_dictionary_mut(pages[0]).unwrap();
        page.set("Contents", content);
        let font = dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica" };
        page.set(
            "Resources",
            dictionary! { "XObject" => dictionary! { "X" => form_id }, "Font" => dictionary! { "F1" => font } },
        );
    });
    let doc = PdfDocument::open(&bytes, &PdfLimits::default()).unwrap();
    assert_eq!(doc.text(1, 1, &TextBudget::default()).unwrap(), ["After"]);
}

#[wasm_bindgen_test]
fn a_flate_bomb_in_page_content_is_refused_inside_the_memory_ceiling() {
    // 64 MiB of spaces, compressed to about 64 KB, as a page's content stream.
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    let spaces = vec![b' '; 1024 * 1024];
    for _ in 0..64 {
        encoder.write_all(&spaces).unwrap();
    }
    let bomb = encoder.finish().unwrap();
    let bytes = pdf(1, |doc, pages| {
        let stream = Stream::new(dictionary! { "Filter" => "FlateDecode" }, bomb.clone()).with_compression(false);
        let content = doc.add_object(stream);
        doc.get_dictionary_mut(pages[0]).unwrap().set("Contents", content);
    });
    let limits = PdfLimits { max_stream_bytes: 8 * 1024 * 1024, ..PdfLimits::default() };
    let refused = PdfDocument::open(&bytes, &limits).unwrap().text(1, 1, &TextBudget::default()).unwrap_err();
    assert!(matches!(refused, PdfError::OverBudget { limit: "decompressed stream size", .. }), "{refused}");
    assert!(linear_memory() <= MEMORY_CEILING, "{} bytes", linear_memory());
}

#[wasm_bindgen_test]
fn an_encrypted_file_with_an_empty_password_opens() {
    let bytes = pdf(2, |doc, _| {
        let id = Object::String(b"0123456789abcdef".to_vec(), lopdf::StringFormat::Literal);
        doc.trailer.set("ID", vec![id.clone(), id]);
        let version = lopdf::EncryptionVersion::V2 {
            document: doc,
            owner_password: "owner",
            user_password: "",
            key_length: 128,
            permissions: lopdf::Permissions::all(),
        };
        let state = lopdf::EncryptionState::try_from(version).unwrap();
        doc.encrypt(&state).unwrap();
    });
    let doc = PdfDocument::open(&bytes, &PdfLimits::default()).unwrap();
    assert_eq!(doc.text(2, 2, &TextBudget::default()).unwrap(), ["Page 2"]);
}

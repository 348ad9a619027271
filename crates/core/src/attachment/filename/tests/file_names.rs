//! File names: Zotero's `getValidFileName`, extensions kept, Windows' reserved names, length limits, and renaming
//! twice being renaming once (cases from the TypeScript server's rename.test.ts, then more).

use super::*;

#[test]
fn t11_illegal_characters_are_removed() {
    assert_eq!(valid_file_name("a/b\\c:d*e?f\"g<h>i|j"), "abcdefghij");
}

#[test]
fn t12_newlines_become_spaces_and_leading_dots_go() {
    assert_eq!(valid_file_name("...hidden\nname"), "hidden name");
    assert_eq!(valid_file_name("a\r\n\tb\u{2003}c\u{200B}d"), "a b cd");
    assert_eq!(valid_file_name(" . .hidden"), "hidden");
}

#[test]
fn t13_empty_or_dot_only_names_give_underscore() {
    assert_eq!(valid_file_name("..."), "_");
    assert_eq!(valid_file_name(""), "_");
    assert_eq!(valid_file_name("."), "_");
    assert_eq!(valid_file_name(".."), "_");
    assert_eq!(valid_file_name("???"), "_");
}

#[test]
fn t14_extension_is_kept() {
    assert_eq!(
        build(&paper(), "arXiv-1706.03762v5.pdf").as_deref(),
        Some("Vaswani and Shazeer - 2017 - Attention Is All You Need.pdf")
    );
}

#[test]
fn t15_name_without_extension() {
    assert_eq!(build(&paper(), "scan").as_deref(), Some("Vaswani and Shazeer - 2017 - Attention Is All You Need"));
}

#[test]
fn t16_desktop_name_round_trips() {
    let item = with(
        paper(),
        json!({
            "title": "DrivingDiffusion: Layout-Guided Multi-view Driving Scenarios Video Generation",
            "date": "2024",
            "creators": [
                {"creatorType": "author", "firstName": "Xiaofan", "lastName": "Li"},
                {"creatorType": "author", "firstName": "Yifu", "lastName": "Zhang"},
                {"creatorType": "author", "firstName": "Xiaoqing", "lastName": "Ye"}
            ]
        }),
    );
    let existing =
        "Li et al. - 2024 - DrivingDiffusion Layout-Guided Multi-view Driving Scenarios Video Generation.pdf";
    assert_eq!(build(&item, existing).as_deref(), Some(existing));
}

#[test]
fn t17_new_import_name_is_stable() {
    let creators: Vec<Value> = ["Schulman", "Wolski", "Dhariwal", "Radford", "Klimov"]
        .iter()
        .map(|n| json!({"creatorType": "author", "lastName": n}))
        .collect();
    let title = format!("Proximal Policy Optimization: {}", "Very Long Subtitle ".repeat(12));
    let item = with(paper(), json!({"title": title, "date": "2017", "creators": creators}));
    let imported = build(&item, "attachment.pdf").expect("a name");
    assert!(imported.starts_with("Schulman et al. - 2017 - Proximal Policy Optimization "), "{imported}");
    assert!(imported.ends_with(".pdf"), "{imported}");
    assert!(!imported.contains(':'), "{imported}");
    assert_eq!(build(&item, &imported).as_deref(), Some(imported.as_str()));
    assert_eq!(valid_file_name(&imported), imported);
}

#[test]
fn t18_extension_of_edge_cases() {
    assert_eq!(extension_of("report.final.pdf"), "pdf");
    assert_eq!(extension_of("no-extension"), "");
    assert_eq!(extension_of("trailing."), "");
    assert_eq!(extension_of("v1.2.3-notanext"), "");
    assert_eq!(extension_of(".pdf"), "");
    assert_eq!(extension_of("a.TooLongExt"), "");
    assert_eq!(extension_of("a.EPUB"), "EPUB");
    assert_eq!(extension_of("a.pdf\u{200B}"), "");
}

#[test]
fn windows_reserved_names_get_an_underscore() {
    assert_eq!(valid_file_name("CON"), "_CON");
    assert_eq!(valid_file_name("nul.txt"), "_nul.txt");
    assert_eq!(valid_file_name("Com1.tar.gz"), "_Com1.tar.gz");
    assert_eq!(valid_file_name("LPT9"), "_LPT9");
    assert_eq!(valid_file_name("aux ."), "_aux");
    assert_eq!(valid_file_name("CONSOLE"), "CONSOLE");
    assert_eq!(valid_file_name("COM10"), "COM10");
    let item = with(paper(), json!({"title": "Con", "creators": [], "date": ""}));
    assert_eq!(build(&item, "x.pdf").as_deref(), Some("_Con.pdf"));
}

#[test]
fn trailing_dots_and_spaces_are_stripped_from_whole_names() {
    assert_eq!(valid_file_name("name. . "), "name");
    // Before an extension a trailing dot stays, as Desktop leaves it.
    let item = with(paper(), json!({"title": "Vol. 2.", "creators": [], "date": ""}));
    assert_eq!(build(&item, "x.pdf").as_deref(), Some("Vol. 2..pdf"));
    assert_eq!(build(&item, "noext").as_deref(), Some("Vol. 2"));
}

#[test]
fn long_multibyte_names_are_cut_on_character_boundaries() {
    // Mostly ASCII, so the character limit comes before the byte limit.
    let long = "a".repeat(150) + &"é".repeat(100);
    let name = valid_file_name(&long);
    assert_eq!(name.chars().count(), MAX_FILENAME_CHARS);
    assert!(name.ends_with('é'));
    let item = with(paper(), json!({"title": "a".repeat(190) + &"数据".repeat(10), "creators": [], "date": ""}));
    let t = "{{ title }}";
    let built = build_renamed_filename(data(&item), "a.pdf", t, None).expect("a name");
    assert_eq!(built.chars().count(), MAX_FILENAME_CHARS);
    assert!(built.ends_with("据.pdf"), "{built}");
    assert_eq!(valid_file_name(&built), built);
    assert_eq!(build_renamed_filename(data(&item), &built, t, None), Some(built.clone()));
}

#[test]
fn long_names_keep_to_255_bytes() {
    let emoji = valid_file_name(&"😀".repeat(100));
    assert_eq!(emoji, "😀".repeat(63));
    assert_eq!(valid_file_name(&("a".to_owned() + &"😀".repeat(100))), "a".to_owned() + &"😀".repeat(63));
    let accents = valid_file_name(&("é".repeat(150) + &"😀".repeat(100)));
    assert_eq!(accents, "é".repeat(127));
    // What the cut leaves at the end is trimmed like any other end: no trailing space or dot.
    assert_eq!(valid_file_name(&("é".repeat(127) + " x")), "é".repeat(127));
    assert_eq!(valid_file_name(&("é".repeat(127) + ".x")), "é".repeat(127));
    for name in [emoji, accents] {
        assert!(name.len() <= MAX_FILENAME_BYTES, "{} bytes", name.len());
        assert_eq!(valid_file_name(&name), name);
    }
}

#[test]
fn a_200_character_chinese_title_keeps_its_extension_within_255_bytes() {
    let title: String = "深度学习的注意力机制综述".chars().cycle().take(200).collect();
    let item = json!({"itemType": "journalArticle", "title": title, "date": "2020",
        "creators": [{"creatorType": "author", "lastName": "王"}, {"creatorType": "author", "lastName": "李"}]});
    for template in [DEFAULT_TEMPLATE, "{{ title }}"] {
        for (current, ext) in [("x.pdf", ".pdf"), ("book.epub", ".epub"), ("noext", "")] {
            let built = build_renamed_filename(data(&item), current, template, None).expect("a name");
            assert!(built.len() <= MAX_FILENAME_BYTES, "{template} {current}: {} bytes", built.len());
            assert!(built.len() > MAX_FILENAME_BYTES - 3, "{template} {current}: cut short, {} bytes", built.len());
            assert!(built.ends_with(ext), "{built}");
            assert_eq!(valid_file_name(&built), built);
            assert_eq!(build_renamed_filename(data(&item), &built, template, None), Some(built.clone()));
        }
    }
    let built = build(&item, "x.pdf").expect("a name");
    assert!(built.starts_with("王 and 李 - 2020 - 深度学习的注意力机制综述深度"), "{built}");
    assert!(built.ends_with(".pdf") && built.len() <= MAX_FILENAME_BYTES, "{built}");
}

#[test]
fn non_latin_titles_are_kept() {
    let item = json!({"itemType": "journalArticle", "title": "深度学习：综述", "date": "2020",
        "creators": [{"creatorType": "author", "lastName": "王"}, {"creatorType": "author", "lastName": "李"}]});
    assert_eq!(build(&item, "x.pdf").as_deref(), Some("王 and 李 - 2020 - 深度学习：综述.pdf"));
    let item = json!({"itemType": "book", "title": "Война и мир", "date": "1869",
        "creators": [{"creatorType": "author", "firstName": "Лев", "lastName": "Толстой"}]});
    assert_eq!(build(&item, "x.epub").as_deref(), Some("Толстой - 1869 - Война и мир.epub"));
    let item = json!({"itemType": "book", "title": "吾輩は猫である", "date": "1905",
        "creators": [{"creatorType": "author", "lastName": "夏目"}]});
    assert_eq!(build(&item, "x.pdf").as_deref(), Some("夏目 - 1905 - 吾輩は猫である.pdf"));
}

#[test]
fn renaming_twice_is_renaming_once() {
    let items = [
        paper(),
        with(paper(), json!({"title": "What is 1.5?"})),
        with(paper(), json!({"title": "  ..Dots. and  spaces .  "})),
        with(paper(), json!({"title": "Version 2.0", "creators": [], "date": ""})),
        with(paper(), json!({"title": "<b>Bold</b>: a/b\\c", "creators": [], "date": ""})),
    ];
    for item in &items {
        for current in ["file.pdf", "noext", "archive.tar.gz", "odd.name-"] {
            let once = build(item, current).expect("a name");
            assert_eq!(build(item, &once).as_deref(), Some(once.as_str()), "{current} → {once}");
            assert_eq!(valid_file_name(&once), once);
        }
    }
}

#[test]
fn valid_file_name_is_idempotent() {
    for raw in ["  a  b  ", ". . x.", "CON.", "a\u{0}b\u{1F}c", "\u{FEFF}x\u{FEFF}y", "x".repeat(250).as_str(), "…"] {
        let once = valid_file_name(raw);
        assert_eq!(valid_file_name(&once), once, "{raw:?}");
    }
    assert_eq!(valid_file_name("a\u{0}b\u{1F}c\u{7}"), "abc");
    assert_eq!(valid_file_name("\u{FEFF}x\u{FEFF}y"), "x y");
}

#[test]
fn nothing_rendered_keeps_the_current_name() {
    let empty = json!({"itemType": "journalArticle"});
    assert_eq!(build(&empty, "x.pdf"), None);
    assert_eq!(build_renamed_filename(data(&paper()), "x.pdf", r#"{{ title match="zzz" }}"#, None), None);
    assert_eq!(build_renamed_filename(data(&paper()), "x.pdf", "???", None), None);
}

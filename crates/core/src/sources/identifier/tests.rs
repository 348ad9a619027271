//! Identifier detection: upstream's verified examples (spec §8.1) and its sources.test.ts cases first, then each
//! kind's forms, the links, the errors and the splitting of lists.

use super::*;

fn found(input: &str) -> Identifier {
    match detect(input) {
        Ok(identifier) => identifier,
        Err(error) => panic!("`{input}` was not detected: {error}"),
    }
}

fn refused(input: &str) -> IdentifierError {
    match detect(input) {
        Ok(identifier) => panic!("`{input}` was detected as {identifier:?}"),
        Err(error) => error,
    }
}

fn doi(value: &str) -> Identifier {
    Identifier::Doi(value.to_owned())
}

fn arxiv(id: &str, version: Option<u32>) -> Identifier {
    Identifier::Arxiv { id: id.to_owned(), version }
}

fn isbn(isbn13: &str, isbn10: Option<&str>) -> Identifier {
    Identifier::Isbn { isbn13: isbn13.to_owned(), isbn10: isbn10.map(str::to_owned) }
}

fn pmid(value: &str) -> Identifier {
    Identifier::Pmid(value.to_owned())
}

fn pmcid(value: &str) -> Identifier {
    Identifier::Pmcid(value.to_owned())
}

/// The pieces and outcomes of `detect_all`, outcomes as identifiers or error kinds, for compact assertions.
fn all(input: &str) -> Vec<(String, Result<Identifier, String>)> {
    detect_all(input).into_iter().map(|(piece, outcome)| (piece, outcome.map_err(|e| format!("{e:?}")))).collect()
}

fn only_identifiers(input: &str) -> Vec<Identifier> {
    detect_all(input).into_iter().map(|(piece, outcome)| outcome.unwrap_or_else(|e| panic!("{piece}: {e}"))).collect()
}

// --- verified examples of each kind --------------------------------------------------------------------------

#[test]
fn spec_an_arxiv_doi_is_a_doi_compared_lowercased() {
    let identifier = found("10.48550/arXiv.1706.03762");
    assert_eq!(identifier, doi("10.48550/arXiv.1706.03762"), "the case is kept");
    assert_eq!(identifier.key(), "10.48550/arxiv.1706.03762", "upstream's lowercased value is the key");
}

#[test]
fn spec_2017_1234_is_an_arxiv_id_though_its_month_is_17() {
    assert_eq!(found("2017.1234"), arxiv("2017.1234", None));
}

#[test]
fn spec_hep_th_9901001_is_an_old_style_arxiv_id() {
    assert_eq!(found("hep-th/9901001"), arxiv("hep-th/9901001", None));
}

#[test]
fn spec_a_dx_doi_org_link_loses_its_trailing_dot() {
    let identifier = found("https://dx.doi.org/10.1000/ABC.");
    assert_eq!(identifier, doi("10.1000/ABC"));
    assert_eq!(identifier.key(), "10.1000/abc");
}

// --- upstream sources.test.ts, detectIdentifier --------------------------------------------------------------

#[test]
fn bare_prefixed_and_doi_org_forms_give_the_same_doi() {
    for input in ["10.1038/nphys1170", "doi:10.1038/nphys1170", "https://doi.org/10.1038/nphys1170"] {
        assert_eq!(found(input), doi("10.1038/nphys1170"), "{input}");
    }
}

#[test]
fn five_arxiv_shapes_give_1706_03762() {
    for input in [
        "1706.03762",
        "arXiv:1706.03762",
        "arxiv 1706.03762",
        "https://arxiv.org/abs/1706.03762",
        "https://arxiv.org/pdf/1706.03762.pdf",
    ] {
        assert_eq!(found(input), arxiv("1706.03762", None), "{input}");
    }
    assert_eq!(found("math.GT/0309136"), arxiv("math.GT/0309136", None));
}

#[test]
fn isbn_check_digits_are_verified() {
    assert!(matches!(refused("978-0-306-40615-8"), IdentifierError::IsbnCheckDigit { .. }));
    assert_eq!(found("0-306-40615-2"), isbn("9780306406157", Some("0306406152")));
}

#[test]
fn a_link_without_identifier_prose_and_nothing_are_refused() {
    assert!(matches!(refused("https://example.com/page"), IdentifierError::UrlWithoutIdentifier { .. }));
    assert!(matches!(refused("a paper about attention"), IdentifierError::Unrecognised { .. }));
    assert_eq!(refused(""), IdentifierError::Empty);
    assert_eq!(refused("  \n "), IdentifierError::Empty);
}

// --- DOIs ----------------------------------------------------------------------------------------------------

#[test]
fn the_doi_prefix_is_case_insensitive_and_may_be_followed_by_a_space() {
    for input in [
        "DOI: 10.1000/abc",
        "Doi:10.1000/abc",
        "doi 10.1000/abc",
        "DOI:   10.1000/abc",
        "DOI: https://doi.org/10.1000/abc",
    ] {
        assert_eq!(found(input), doi("10.1000/abc"), "{input}");
    }
}

#[test]
fn doi_org_links_in_every_spelling() {
    for input in [
        "http://doi.org/10.1000/abc",
        "https://dx.doi.org/10.1000/abc",
        "HTTPS://WWW.DOI.ORG/10.1000/abc",
        "doi.org/10.1000/abc",
        "dx.doi.org/10.1000/abc",
        "https://doi.org/10.1000/abc?type=pdf#top",
    ] {
        assert_eq!(found(input), doi("10.1000/abc"), "{input}");
    }
}

#[test]
fn a_percent_encoded_doi_org_link_is_decoded() {
    assert_eq!(found("https://doi.org/10.1000%2Fabc"), doi("10.1000/abc"));
    assert_eq!(
        found("https://doi.org/10.1002/%28SICI%291097-4636%28199706%2935%3A4%3C467%3A%3AAID-JBM6%3E3.0.CO%3B2-K"),
        doi("10.1002/(SICI)1097-4636(199706)35:4<467::AID-JBM6>3.0.CO;2-K")
    );
}

#[test]
fn a_doi_keeps_brackets_colons_semicolons_and_angle_brackets_in_its_suffix() {
    let sici = "10.1002/(SICI)1097-4636(199706)35:4<467::AID-JBM6>3.0.CO;2-K";
    assert_eq!(found(sici), doi(sici));
    assert_eq!(found(&format!("https://doi.org/{sici}")), doi(sici), "unencoded in a link");
}

#[test]
fn punctuation_after_a_doi_and_brackets_around_it_are_dropped() {
    for input in [
        "10.1000/abc.",
        "10.1000/abc,",
        "10.1000/abc;",
        "10.1000/abc).",
        "(10.1000/abc)",
        "[doi:10.1000/abc]",
        "\"10.1000/abc\".",
        "\u{201c}10.1000/abc\u{201d}",
        "<https://doi.org/10.1000/abc>",
        "  10.1000/abc  ",
    ] {
        assert_eq!(found(input), doi("10.1000/abc"), "{input}");
    }
}

#[test]
fn a_closing_bracket_the_doi_opened_is_kept() {
    assert_eq!(found("10.1000/xyz(1)"), doi("10.1000/xyz(1)"));
    assert_eq!(found("(10.1000/xyz(1))."), doi("10.1000/xyz(1)"));
}

#[test]
fn a_doi_keeps_its_case_and_its_key_is_lowercase() {
    let identifier = found("10.1093/NAR/GKAA1100");
    assert_eq!(identifier.to_string(), "10.1093/NAR/GKAA1100");
    assert_eq!(identifier.key(), "10.1093/nar/gkaa1100");
    assert_eq!(identifier.key(), found("10.1093/nar/gkaa1100").key());
    assert_eq!(identifier.kind(), "doi");
}

#[test]
fn a_registrant_code_has_4_to_9_digits_and_may_have_subdivisions() {
    assert_eq!(found("10.1000.10/abc"), doi("10.1000.10/abc"));
    assert_eq!(found("10.123456789/abc"), doi("10.123456789/abc"));
    assert!(matches!(refused("10.123/abc"), IdentifierError::Unrecognised { .. }));
    assert!(matches!(refused("10.1234567890/abc"), IdentifierError::Unrecognised { .. }));
}

#[test]
fn a_doi_prefix_commits_to_a_doi() {
    for input in ["doi:10.1000/", "doi: abc", "doi:10.1000/a b", "https://doi.org/", "https://doi.org/search?q=x"] {
        let error = refused(input);
        assert!(matches!(error, IdentifierError::Malformed { kind: "DOI", .. }), "{input}: {error:?}");
        assert!(error.to_string().contains("10.1038/s41586-020-2649-2"), "an example: {error}");
    }
}

#[test]
fn the_only_doi_in_a_pasted_reference_is_found() {
    let reference = "Vaswani, A. et al. (2017). Attention is all you need. https://doi.org/10.48550/arXiv.1706.03762.";
    assert_eq!(found(reference), doi("10.48550/arXiv.1706.03762"));
    assert_eq!(found("see doi:10.1000/abc (and 10.1000/ABC again)"), doi("10.1000/abc"), "one DOI, twice");
}

#[test]
fn two_dois_in_text_are_not_chosen_between() {
    assert!(matches!(refused("compare 10.1000/abc with 10.1000/xyz"), IdentifierError::Unrecognised { .. }));
}

#[test]
fn a_doi_is_not_found_inside_a_longer_number() {
    assert!(matches!(refused("code 110.1000/abc"), IdentifierError::Unrecognised { .. }));
    assert!(matches!(refused("v2.10.1000/abc"), IdentifierError::Unrecognised { .. }));
}

// --- arXiv ---------------------------------------------------------------------------------------------------

#[test]
fn an_arxiv_version_is_kept() {
    let identifier = found("2301.01234v2");
    assert_eq!(identifier, arxiv("2301.01234", Some(2)));
    assert_eq!(identifier.to_string(), "arXiv:2301.01234v2");
    assert_eq!(identifier.kind(), "arxiv");
    assert_eq!(found("arXiv:1706.03762v5"), arxiv("1706.03762", Some(5)));
    assert_eq!(found("https://arxiv.org/abs/1706.03762v7"), arxiv("1706.03762", Some(7)));
    assert_eq!(found("2301.01234").to_string(), "arXiv:2301.01234");
    assert_ne!(found("2301.01234").key(), identifier.key(), "a version is a different identifier");
}

#[test]
fn new_style_ids_have_4_or_5_digits_after_the_dot() {
    assert_eq!(found("0704.0001"), arxiv("0704.0001", None));
    assert_eq!(found("2301.01234"), arxiv("2301.01234", None));
    assert!(matches!(refused("2301.123"), IdentifierError::Unrecognised { .. }));
    assert!(matches!(refused("2301.123456"), IdentifierError::Unrecognised { .. }));
}

#[test]
fn old_style_ids_name_an_archive_and_may_have_a_class_and_a_version() {
    assert_eq!(found("hep-th/9901001v2"), arxiv("hep-th/9901001", Some(2)));
    assert_eq!(found("math.gt/0309136"), arxiv("math.GT/0309136", None), "a two-letter class is uppercase");
    assert_eq!(found("cond-mat.str-el/0501001"), arxiv("cond-mat.str-el/0501001", None));
    assert_eq!(found("solv-int/9901001"), arxiv("solv-int/9901001", None), "the v of solv is no version");
    assert_eq!(found("arXiv:Quant-Ph/0101001"), arxiv("quant-ph/0101001", None));
    assert!(matches!(refused("and/1234567"), IdentifierError::Unrecognised { .. }), "not an archive");
    assert!(matches!(refused("hep-th/990100"), IdentifierError::Unrecognised { .. }), "six digits");
}

#[test]
fn the_arxiv_prefix_takes_colons_spaces_and_slashes() {
    for input in ["arXiv:2301.01234", "ARXIV: 2301.01234", "arxiv/2301.01234", "arXiv2301.01234"] {
        assert_eq!(found(input), arxiv("2301.01234", None), "{input}");
    }
}

#[test]
fn arxivs_category_after_the_id_is_ignored() {
    assert_eq!(found("arXiv:1706.03762 [cs.CL]"), arxiv("1706.03762", None));
    assert_eq!(found("1706.03762v5 [cs.CL]"), arxiv("1706.03762", Some(5)));
}

#[test]
fn arxiv_links_to_the_abstract_the_pdf_and_the_html() {
    for input in [
        "https://arxiv.org/abs/2301.01234v2",
        "https://arxiv.org/pdf/2301.01234v2",
        "https://arxiv.org/pdf/2301.01234v2.pdf",
        "https://arxiv.org/html/2301.01234v2/",
        "http://export.arxiv.org/abs/2301.01234v2",
        "https://arxiv.org/abs/2301.01234v2?context=cs",
        "arxiv.org/abs/2301.01234v2",
    ] {
        assert_eq!(found(input), arxiv("2301.01234", Some(2)), "{input}");
    }
    assert_eq!(found("https://arxiv.org/abs/hep-th/9901001"), arxiv("hep-th/9901001", None));
    assert_eq!(found("https://arxiv.org/pdf/math.GT/0309136v1.pdf"), arxiv("math.GT/0309136", Some(1)));
}

#[test]
fn an_arxiv_prefix_or_link_commits_to_an_arxiv_id() {
    for input in ["arXiv:2301.01234v0", "arXiv: attention", "https://arxiv.org/list/cs.CL/recent", "arXiv:1.2"] {
        let error = refused(input);
        assert!(matches!(error, IdentifierError::Malformed { kind: "arXiv id", .. }), "{input}: {error:?}");
    }
}

// --- ISBNs ---------------------------------------------------------------------------------------------------

#[test]
fn an_isbn_13_in_its_written_forms() {
    for input in [
        "978-0-306-40615-7",
        "978 0 306 40615 7",
        "9780306406157",
        "ISBN 978-0-306-40615-7",
        "ISBN: 9780306406157",
        "ISBN-13: 978-0-306-40615-7",
        "isbn13 9780306406157",
        "ISBN9780306406157",
    ] {
        assert_eq!(found(input), isbn("9780306406157", Some("0306406152")), "{input}");
    }
}

#[test]
fn an_isbn_10_is_converted_to_isbn_13_and_shares_its_key() {
    let identifier = found("ISBN-10: 0-306-40615-2");
    assert_eq!(identifier, isbn("9780306406157", Some("0306406152")));
    assert_eq!(identifier.to_string(), "ISBN 9780306406157");
    assert_eq!(identifier.kind(), "isbn");
    assert_eq!(identifier.key(), found("978-0-306-40615-7").key());
}

#[test]
fn an_isbn_10_may_end_in_x() {
    assert_eq!(found("0-8044-2957-X"), isbn("9780804429573", Some("080442957X")));
    assert_eq!(found("080442957x"), isbn("9780804429573", Some("080442957X")));
}

#[test]
fn a_979_isbn_has_no_isbn_10() {
    assert_eq!(found("979-10-90636-07-1"), isbn("9791090636071", None));
}

#[test]
fn a_wrong_check_digit_is_named_with_the_right_one() {
    let error = refused("ISBN 978-0-306-40615-8");
    assert_eq!(
        error,
        IdentifierError::IsbnCheckDigit {
            input: "ISBN 978-0-306-40615-8".to_owned(),
            kind: "ISBN-13",
            found: '8',
            expected: '7',
            corrected: "978-0-306-40615-7".to_owned(),
        }
    );
    let message = error.to_string();
    assert!(message.contains("check digit") && message.contains("need 7 (978-0-306-40615-7)"), "{message}");

    let error = refused("0-306-40615-3");
    assert!(matches!(error, IdentifierError::IsbnCheckDigit { kind: "ISBN-10", expected: '2', .. }), "{error:?}");
    let error = refused("0-8044-2957-1");
    assert!(error.to_string().contains("need X (0-8044-2957-X)"), "{error}");
}

#[test]
fn thirteen_digits_outside_978_and_979_are_not_an_isbn() {
    // A valid EAN-13 check digit, but not a book.
    let error = refused("4006381333931");
    assert!(matches!(error, IdentifierError::Malformed { kind: "ISBN", .. }), "{error:?}");
}

#[test]
fn an_isbn_prefix_commits_to_an_isbn() {
    for input in ["ISBN 12345", "ISBN: 978-0-306", "isbn 03064061X2"] {
        let error = refused(input);
        assert!(matches!(error, IdentifierError::Malformed { kind: "ISBN", .. }), "{input}: {error:?}");
        assert!(error.to_string().contains("978-0-306-40615-7"), "an example: {error}");
    }
}

// --- PubMed and PMC ------------------------------------------------------------------------------------------

#[test]
fn a_pmid_needs_its_prefix() {
    for input in ["PMID: 12345678", "pmid:12345678", "PMID 12345678", "PMID:0012345678"] {
        assert_eq!(found(input), pmid("12345678"), "{input}");
    }
    let identifier = found("PMID: 12345678");
    assert_eq!(identifier.to_string(), "PMID 12345678");
    assert_eq!(identifier.kind(), "pmid");
}

#[test]
fn a_bare_number_is_ambiguous() {
    let error = refused("12345678");
    assert_eq!(error, IdentifierError::BareNumber { input: "12345678".to_owned() });
    let message = error.to_string();
    assert!(message.contains("`PMID: 12345678`") && message.contains("`PMC12345678`"), "{message}");
}

#[test]
fn a_pmid_prefix_commits_to_a_pmid() {
    for input in ["PMID: abc", "PMID: 1234567890", "PMID: 0", "https://pubmed.ncbi.nlm.nih.gov/?term=attention"] {
        let error = refused(input);
        assert!(matches!(error, IdentifierError::Malformed { kind: "PubMed id", .. }), "{input}: {error:?}");
    }
}

#[test]
fn pubmed_links_new_and_old() {
    for input in [
        "https://pubmed.ncbi.nlm.nih.gov/12345678/",
        "https://pubmed.ncbi.nlm.nih.gov/12345678",
        "pubmed.ncbi.nlm.nih.gov/12345678/",
        "https://www.ncbi.nlm.nih.gov/pubmed/12345678",
    ] {
        assert_eq!(found(input), pmid("12345678"), "{input}");
    }
}

#[test]
fn a_pmcid_is_recognised_bare_and_prefixed() {
    for input in ["PMC1234567", "pmc1234567", "PMCID: PMC1234567", "PMCID: 1234567", "pmcid:pmc1234567"] {
        assert_eq!(found(input), pmcid("PMC1234567"), "{input}");
    }
    let identifier = found("PMC1234567");
    assert_eq!(identifier.to_string(), "PMC1234567");
    assert_eq!(identifier.kind(), "pmcid");
    let error = refused("PMCID: PMCX");
    assert!(matches!(error, IdentifierError::Malformed { kind: "PMC id", .. }), "{error:?}");
}

#[test]
fn pmc_links_old_and_new() {
    for input in [
        "https://www.ncbi.nlm.nih.gov/pmc/articles/PMC1234567/",
        "https://www.ncbi.nlm.nih.gov/pmc/articles/PMC1234567/pdf/nihms-123.pdf",
        "https://pmc.ncbi.nlm.nih.gov/articles/PMC1234567/",
        "pmc.ncbi.nlm.nih.gov/articles/PMC1234567",
    ] {
        assert_eq!(found(input), pmcid("PMC1234567"), "{input}");
    }
}

// --- Other links ---------------------------------------------------------------------------------------------

#[test]
fn a_publisher_link_with_a_doi_in_its_path() {
    for (input, expected) in [
        ("https://link.springer.com/article/10.1007/s00285-020-01523-2", "10.1007/s00285-020-01523-2"),
        ("https://link.springer.com/content/pdf/10.1007/s00285-020-01523-2.pdf", "10.1007/s00285-020-01523-2"),
        ("https://onlinelibrary.wiley.com/doi/full/10.1002/anie.201915678", "10.1002/anie.201915678"),
        ("https://onlinelibrary.wiley.com/doi/10.1002/anie.201915678/abstract", "10.1002/anie.201915678"),
        (
            "https://www.tandfonline.com/doi/pdf/10.1080/01621459.2017.1285773?needAccess=true",
            "10.1080/01621459.2017.1285773",
        ),
        ("https://journals.aps.org/prl/abstract/10.1103/PhysRevLett.116.061102", "10.1103/PhysRevLett.116.061102"),
        ("https://www.biorxiv.org/content/10.1101/2020.03.01.123456v2.full.pdf", "10.1101/2020.03.01.123456"),
        ("https://www.medrxiv.org/content/10.1101/2020.03.01.123456v1", "10.1101/2020.03.01.123456"),
    ] {
        assert_eq!(found(input), doi(expected), "{input}");
    }
}

#[test]
fn a_publisher_link_with_a_doi_as_a_query_value() {
    assert_eq!(
        found("https://journals.plos.org/plosone/article?id=10.1371/journal.pone.0123456"),
        doi("10.1371/journal.pone.0123456")
    );
    assert_eq!(found("https://example.org/view?doi=10.1000%2Fabc&lang=en"), doi("10.1000/abc"));
}

#[test]
fn a_link_without_an_identifier_says_so() {
    let input = "https://www.sciencedirect.com/science/article/pii/S0140673620301835";
    let error = refused(input);
    assert_eq!(error, IdentifierError::UrlWithoutIdentifier { input: input.to_owned() });
    assert!(error.to_string().contains("doi.org, arxiv.org or PubMed link"), "{error}");
    assert!(matches!(refused("https://www.ncbi.nlm.nih.gov/gene/7157"), IdentifierError::UrlWithoutIdentifier { .. }));
}

#[test]
fn a_link_that_does_not_parse_is_an_invalid_url() {
    for input in ["https://", "http://exa mple.com/10.1000/abc"] {
        assert!(matches!(refused(input), IdentifierError::InvalidUrl { .. }), "{input}");
    }
}

// --- Errors --------------------------------------------------------------------------------------------------

#[test]
fn refusals_list_every_accepted_form_with_an_example() {
    for error in [refused(""), refused("attention"), refused("42"), refused("https://example.com/")] {
        let message = error.to_string();
        for example in [
            "10.1038/s41586-020-2649-2",
            "arXiv:2301.01234v2",
            "978-0-306-40615-7",
            "PMID: 12345678",
            "PMC1234567",
            "https://doi.org/",
        ] {
            assert!(message.contains(example), "{example} missing from: {message}");
        }
    }
}

#[test]
fn a_refusal_names_its_input() {
    assert!(refused("attention").to_string().starts_with("`attention` is not"));
    assert!(refused("doi: abc").to_string().starts_with("`doi: abc` is not a valid DOI"));
}

#[test]
fn a_word_that_starts_like_a_prefix_is_not_one() {
    assert!(matches!(refused("doing"), IdentifierError::Unrecognised { .. }));
    assert!(matches!(refused("isbnx"), IdentifierError::Unrecognised { .. }));
    assert!(matches!(refused("pmidst"), IdentifierError::Unrecognised { .. }));
}

#[test]
fn brackets_that_do_not_belong_together_are_kept() {
    assert_eq!(tidy("(a)(b)"), "(a)(b)");
    assert_eq!(tidy("((a))."), "a");
    assert_eq!(tidy("'a'"), "a");
    assert_eq!(tidy("a)"), "a");
    assert_eq!(tidy("a(b)"), "a(b)");
}

// --- Lists ---------------------------------------------------------------------------------------------------

#[test]
fn a_list_on_lines_gives_one_outcome_per_line() {
    let input = "10.1000/abc\narXiv:2301.01234v2\r\nISBN 978 0 306 40615 7\n\nPMID: 12345678\nPMC1234567\n";
    assert_eq!(
        only_identifiers(input),
        vec![
            doi("10.1000/abc"),
            arxiv("2301.01234", Some(2)),
            isbn("9780306406157", Some("0306406152")),
            pmid("12345678"),
            pmcid("PMC1234567"),
        ]
    );
}

#[test]
fn commas_and_semicolons_followed_by_a_space_separate() {
    assert_eq!(
        only_identifiers("10.1000/abc, 2301.01234; PMID: 12345678, ISBN 0-306-40615-2;"),
        vec![
            doi("10.1000/abc"),
            arxiv("2301.01234", None),
            pmid("12345678"),
            isbn("9780306406157", Some("0306406152"))
        ]
    );
}

#[test]
fn whitespace_separates_and_a_prefix_stays_with_its_word() {
    assert_eq!(
        only_identifiers("PMID: 12345678 PMID: 23456789 doi 10.1000/abc arXiv: 2301.01234 PMC1234567"),
        vec![pmid("12345678"), pmid("23456789"), doi("10.1000/abc"), arxiv("2301.01234", None), pmcid("PMC1234567")]
    );
}

#[test]
fn a_doi_with_semicolons_is_not_cut() {
    let sici = "10.1002/(SICI)1097-4636(199706)35:4<467::AID-JBM6>3.0.CO;2-K";
    assert_eq!(only_identifiers(&format!("{sici} 10.1000/abc")), vec![doi(sici), doi("10.1000/abc")]);
    assert_eq!(only_identifiers(&format!("{sici}; 10.1000/abc")), vec![doi(sici), doi("10.1000/abc")]);
}

#[test]
fn a_comma_without_space_separates_when_every_part_is_an_identifier() {
    assert_eq!(
        only_identifiers("2301.01234,2301.01235;hep-th/9901001"),
        vec![arxiv("2301.01234", None), arxiv("2301.01235", None), arxiv("hep-th/9901001", None)]
    );
    assert_eq!(only_identifiers("10.1000/a,10.1000/b"), vec![doi("10.1000/a"), doi("10.1000/b")]);
    assert_eq!(only_identifiers("10.1000/a,b"), vec![doi("10.1000/a,b")], "`b` is not one: a DOI with a comma");
}

#[test]
fn every_piece_gets_its_outcome_and_its_text() {
    let outcomes = all("10.1000/abc, 12345678, attention\nISBN 978-0-306-40615-8");
    let pieces: Vec<&str> = outcomes.iter().map(|(piece, _)| piece.as_str()).collect();
    assert_eq!(pieces, ["10.1000/abc", "12345678", "attention", "ISBN 978-0-306-40615-8"]);
    assert_eq!(outcomes[0].1, Ok(doi("10.1000/abc")));
    assert!(outcomes[1].1.as_ref().is_err_and(|e| e.starts_with("BareNumber")));
    assert!(outcomes[2].1.as_ref().is_err_and(|e| e.starts_with("Unrecognised")));
    assert!(outcomes[3].1.as_ref().is_err_and(|e| e.starts_with("IsbnCheckDigit")));
}

#[test]
fn repeats_are_kept_and_share_a_key() {
    let identifiers = only_identifiers("10.1000/ABC\nhttps://doi.org/10.1000/abc");
    assert_eq!(identifiers.len(), 2);
    assert_eq!(identifiers[0].key(), identifiers[1].key());
}

#[test]
fn an_arxiv_id_with_its_category_stays_one_piece() {
    assert_eq!(
        only_identifiers("arXiv:1706.03762 [cs.CL]\narXiv:2301.01234v2 [cs.LG], 10.1000/abc"),
        vec![arxiv("1706.03762", None), arxiv("2301.01234", Some(2)), doi("10.1000/abc")]
    );
}

#[test]
fn nothing_and_punctuation_give_no_pieces() {
    assert!(detect_all("").is_empty());
    assert!(detect_all(" \n\r\n ,; . \n").is_empty());
}

#[test]
fn a_sentence_end_is_not_a_piece() {
    assert_eq!(only_identifiers("10.1000/abc ."), vec![doi("10.1000/abc")]);
    assert_eq!(only_identifiers("(10.1000/abc), (2301.01234)."), vec![doi("10.1000/abc"), arxiv("2301.01234", None)]);
}

// --- Any text ------------------------------------------------------------------------------------------------

/// Text built from pieces of identifiers, punctuation and multi-byte characters, deterministically: detection
/// must never panic (a panic on wasm fails the request), and an identifier's canonical form reads back as itself.
#[test]
fn any_text_is_answered_and_canonical_forms_read_back() {
    // Pieces separated by `|`, which none of them contains.
    const PIECES: &str = "10.|1000|/|abc|é|ß|\u{fb01}|\u{201d}| |\n|,|;|:|(|)|[|]|<|>|\"|'|.|-|doi|arXiv|ISBN|-13|PMID|\
        PMC|pmcid|https://|doi.org|arxiv.org/abs/|pubmed.ncbi.nlm.nih.gov/|v|X|978|0|9|2301|01234|%|%2F|%C3|.pdf|hep-th|\
        math.GT|9901001|10.1000/|https://doi.org/10.1000/|2301.01234|v2|0-306-40615-2|hep-th/9901001|PMID: |doi:";
    let pieces: Vec<&str> = PIECES.split('|').collect();
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |bound: usize| {
        // xorshift64: reproducible without a dependency.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % bound as u64) as usize
    };
    for _ in 0..20_000 {
        let text: String = (0..1 + next(8)).map(|_| pieces[next(pieces.len())]).collect();
        for (piece, outcome) in std::iter::once((text.clone(), detect(&text))).chain(detect_all(&text)) {
            if let Ok(identifier) = outcome {
                let canonical = identifier.to_string();
                assert_eq!(
                    detect(&canonical).map(|again| again.key()),
                    Ok(identifier.key()),
                    "{piece:?} → {canonical:?}"
                );
            }
        }
    }
}

/// `work`'s result, computed on a thread of its own; the test fails when it takes more than a minute (the
/// quadratic tidying took far longer on these texts).
fn within_a_minute<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(work());
    });
    receive.recv_timeout(std::time::Duration::from_secs(60)).expect("finished within a minute")
}

#[test]
fn deep_brackets_long_tails_and_failing_words_are_read_in_linear_time() {
    let doi = || Ok(Identifier::Doi("10.1000/abc".into()));
    let nested = format!("{}10.1000/abc{}", "(".repeat(300_000), ")".repeat(300_000));
    assert_eq!(within_a_minute(move || detect(&nested)), doi());
    let dotted = format!("10.1000/abc{}", " .".repeat(300_000));
    assert_eq!(within_a_minute(move || detect(&dotted)), doi());
    let closed = format!("10.1000/abc{}", ")".repeat(600_000));
    assert_eq!(within_a_minute(move || detect(&closed)), doi());
    // Every `10.` of one long word starts a DOI that a control character at its end spoils.
    let spoiled = format!("{}\u{1}", "(10.1234/a".repeat(100_000));
    assert!(within_a_minute(move || detect(&spoiled)).is_err());
    let quoted = format!("“({}10.1000/abc{})”", "[".repeat(100_000), "]".repeat(100_000));
    assert_eq!(within_a_minute(move || detect(&quoted)), doi());
}

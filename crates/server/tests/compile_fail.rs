//! Writing needs the writer, and the compiler says so: each case in tests/compile_fail/ is a tool that tries to
//! change the library without `RequestContext::writer()` (the zotero:write check), or to read the secrets in
//! the deployment's configuration, and must not compile. The
//! `.stderr` files beside the cases hold the expected errors; regenerate them with
//! `TRYBUILD=overwrite cargo test -p zotero-mcp-server --test compile_fail` and read them before committing:
//! each must fail for its stated reason, not for an unrelated error.

#[test]
fn writes_without_the_writer_do_not_compile() {
    trybuild::TestCases::new().compile_fail("tests/compile_fail/*.rs");
}

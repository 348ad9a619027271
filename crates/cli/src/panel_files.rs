//! The files the MCP Apps panels load from this server (pdf.js), served by the native server at the paths
//! Workers static assets serves them on the Worker (`scripts/build.sh` copies them there), with the same headers.

use http_body_util::Full;
use hyper::body::Bytes;

/// One file: its path under `/apps/`, and its bytes.
const FILES: &[(&str, &[u8])] = &[
    ("/apps/pdfjs/pdf.min.mjs", include_bytes!("../../../apps/vendor/pdfjs/pdf.min.mjs")),
    ("/apps/pdfjs/pdf.worker.min.mjs", include_bytes!("../../../apps/vendor/pdfjs/pdf.worker.min.mjs")),
];

/// The answer for a GET or HEAD of one of the panels' files; `None` for any other request.
pub fn serve(method: &http::Method, path: &str) -> Option<hyper::Response<Full<Bytes>>> {
    if !matches!(*method, http::Method::GET | http::Method::HEAD) {
        return None;
    }
    let (_, bytes) = FILES.iter().find(|(p, _)| *p == path)?;
    let body = if *method == http::Method::HEAD { Bytes::new() } else { Bytes::from_static(bytes) };
    hyper::Response::builder()
        .status(200)
        .header(http::header::CONTENT_TYPE, "text/javascript; charset=utf-8")
        .header(http::header::CONTENT_LENGTH, bytes.len())
        // A panel's frame has an origin of its own (or none): it may load these only if they say anyone may.
        .header(http::header::ACCESS_CONTROL_ALLOW_ORIGIN, "*")
        .header(http::header::CACHE_CONTROL, "public, max-age=86400")
        .header(http::header::X_CONTENT_TYPE_OPTIONS, "nosniff")
        .body(Full::new(body))
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pdf_engine_is_served_to_any_frame_and_nothing_else_is() {
        let response = serve(&http::Method::GET, "/apps/pdfjs/pdf.min.mjs").expect("served");
        assert_eq!(response.headers()[http::header::ACCESS_CONTROL_ALLOW_ORIGIN], "*");
        assert!(response.headers()[http::header::CONTENT_TYPE]
            .to_str()
            .is_ok_and(|t| t.starts_with("text/javascript")));
        assert!(serve(&http::Method::POST, "/apps/pdfjs/pdf.min.mjs").is_none());
        assert!(serve(&http::Method::GET, "/apps/pdfjs/../../Cargo.toml").is_none());
        assert!(serve(&http::Method::GET, "/apps/").is_none());
    }
}

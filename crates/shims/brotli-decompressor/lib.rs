//! Stand-in for `brotli-decompressor`, linked into lopdf through `[patch.crates-io]` (see ../README.md).
//!
//! lopdf decodes the `BrotliDecode` stream filter, which is not part of PDF 1.7 or ISO 32000-2:2020 and which
//! pdf.js does not read either; carrying the real decoder would put its 120 KB dictionary into the Worker for
//! files nobody has. A stream with that filter fails to decode here, and lopdf reports it as a damaged stream.

use std::io::{self, Read};

/// Reads nothing: every read says Brotli is not supported.
pub struct Decompressor<R> {
    _input: R,
}

impl<R: Read> Decompressor<R> {
    pub fn new(input: R, _buffer_size: usize) -> Self {
        Self { _input: input }
    }
}

impl<R: Read> Read for Decompressor<R> {
    fn read(&mut self, _buf: &mut [u8]) -> io::Result<usize> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "Brotli-compressed PDF streams (/BrotliDecode) are not supported",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_read_is_refused() {
        let mut out = Vec::new();
        let error = Decompressor::new(&b"\x1b\x03\x00"[..], 4096).read_to_end(&mut out).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::Unsupported);
        assert!(out.is_empty());
    }
}

//! The cryptography of the token store, bit for bit that of workers-oauth-provider 0.10.3, so that grants and
//! tokens written by a deployment of the TypeScript project stay valid here (and the other way round).
//!
//! - Secrets (tokens, codes, client secrets) are stored only as lowercase hex SHA-256 of their UTF-8 bytes.
//! - A grant's props are encrypted with AES-256-GCM under a key made for that grant. The IV is twelve zero bytes,
//!   which is safe only because every key encrypts exactly one message (a new key is drawn whenever props are
//!   encrypted); the stored form is standard base64 of ciphertext followed by the 16-byte tag.
//! - That key is stored only wrapped (AES-KW, RFC 3394) under a key derived from each token that may use it:
//!   HMAC-SHA256 of the token under a fixed key. Whoever has the KV dump but no live token cannot read props.

use aes_gcm::aead::{Aead, KeyInit};
use aes_gcm::Aes256Gcm;
use aes_kw::KwAes256;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The fixed HMAC key of workers-oauth-provider's wrapping-key derivation. Not a secret: it only separates the
/// derivation from the token hash, so a stored token id cannot be turned into a wrapping key.
const WRAPPING_KEY_HMAC_KEY: [u8; 32] = [
    0x22, 0x7e, 0x26, 0x86, 0x8d, 0xf1, 0xe1, 0x6d, 0x80, 0x70, 0xea, 0x17, 0x97, 0x5b, 0x47, 0xa6, 0x82, 0x18, 0xfa,
    0x87, 0x28, 0xae, 0xde, 0x85, 0xb5, 0x1d, 0x4a, 0xd9, 0x96, 0xca, 0xca, 0x43,
];

/// The 64 characters random identifiers and secrets are drawn from (a byte modulo 64 is unbiased).
const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// A failure of the cryptographic layer. None of these carries secret material.
#[derive(Debug, thiserror::Error)]
pub enum CryptoError {
    #[error("the runtime's random number generator failed: {0}")]
    Random(String),
    #[error("stored {what} is not valid base64")]
    Base64 { what: &'static str },
    #[error("the props key could not be unwrapped with this token (wrong token or corrupted record)")]
    Unwrap,
    #[error("the props could not be decrypted (wrong key or corrupted record)")]
    Decrypt,
    #[error("the props could not be encrypted")]
    Encrypt,
}

/// `len` characters from `A–Z a–z 0–9 - _`, 6 bits of entropy each, from the platform CSPRNG
/// (`crypto.getRandomValues` on Workers).
pub fn random_string(len: usize) -> Result<String, CryptoError> {
    let mut bytes = vec![0u8; len];
    getrandom::fill(&mut bytes).map_err(|e| CryptoError::Random(e.to_string()))?;
    Ok(bytes.iter().map(|b| ALPHABET[usize::from(*b % 64)] as char).collect())
}

/// Lowercase hex SHA-256 of the UTF-8 bytes: the stored form of every token, code and client secret.
pub fn sha256_hex(value: &str) -> String {
    hex(&Sha256::digest(value.as_bytes()))
}

/// Whether `presented` (a token, code or client secret) hashes to `stored_hash`, its stored SHA-256 hex.
/// Compared with [`secrets_equal`], so neither the position of a difference nor a wrong-length stored value
/// shows in the timing.
pub fn matches_hash(presented: &str, stored_hash: &str) -> bool {
    secrets_equal(&sha256_hex(presented), stored_hash)
}

/// The one comparison for secrets and their hashes (passwords, token ids, code ids, PKCE challenges): both sides
/// are hashed first and the digests compared in constant time, so the time taken reveals neither where the
/// values differ nor (because digests have one length) whether their lengths do. Every such comparison in the
/// auth code goes through here; a plain `==` would stop at the first differing byte.
pub fn secrets_equal(a: &str, b: &str) -> bool {
    Sha256::digest(a.as_bytes()).ct_eq(&Sha256::digest(b.as_bytes())).into()
}

/// PKCE S256 (RFC 7636): base64url without padding of SHA-256 of the verifier.
pub fn pkce_s256(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// Whether `challenge` can be an S256 code challenge (RFC 7636 §4.2): the unpadded base64url of a SHA-256
/// digest, so exactly 43 characters of `A–Z a–z 0–9 - _` that decode to 32 bytes. Anything else can never
/// match a verifier, and is refused when the code is asked for rather than when it is redeemed.
pub fn is_s256_challenge(challenge: &str) -> bool {
    challenge.len() == 43
        && base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(challenge).is_ok_and(|digest| digest.len() == 32)
}

/// Whether `verifier` is a code verifier as RFC 7636 §4.1 defines it: 43 to 128 characters of
/// `A–Z a–z 0–9 - . _ ~`. Shorter ones are guessable; the rest of the grammar keeps them URL-safe.
pub fn is_code_verifier(verifier: &str) -> bool {
    (43..=128).contains(&verifier.len())
        && verifier.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// A grant's AES-256 props key. Deliberately not `Debug`.
#[derive(Clone)]
pub struct PropsKey([u8; 32]);

impl PropsKey {
    /// A fresh random key.
    pub fn generate() -> Result<Self, CryptoError> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).map_err(|e| CryptoError::Random(e.to_string()))?;
        Ok(Self(key))
    }

    /// Encrypts `plaintext` (the props JSON) and returns the stored base64 form.
    pub fn encrypt(&self, plaintext: &[u8]) -> Result<String, CryptoError> {
        let cipher = Aes256Gcm::new_from_slice(&self.0).map_err(|_| CryptoError::Encrypt)?;
        let sealed = cipher.encrypt(&zero_nonce(), plaintext).map_err(|_| CryptoError::Encrypt)?;
        Ok(base64::engine::general_purpose::STANDARD.encode(sealed))
    }

    /// Decrypts the stored base64 form.
    pub fn decrypt(&self, stored: &str) -> Result<Vec<u8>, CryptoError> {
        let sealed = decode_standard(stored, "encryptedProps")?;
        let cipher = Aes256Gcm::new_from_slice(&self.0).map_err(|_| CryptoError::Decrypt)?;
        cipher.decrypt(&zero_nonce(), sealed.as_slice()).map_err(|_| CryptoError::Decrypt)
    }

    /// Wraps this key under `token` (an auth code, access or refresh token): standard base64 of 40 bytes.
    pub fn wrap_for(&self, token: &str) -> Result<String, CryptoError> {
        let kw = KwAes256::new_from_slice(&wrapping_key(token)).map_err(|_| CryptoError::Encrypt)?;
        let mut out = [0u8; 40];
        let wrapped = kw.wrap_key(&self.0, &mut out).map_err(|_| CryptoError::Encrypt)?;
        Ok(base64::engine::general_purpose::STANDARD.encode(wrapped))
    }

    /// Unwraps a key stored with [`PropsKey::wrap_for`]; fails unless `token` is the very token it was wrapped for.
    pub fn unwrap_with(token: &str, wrapped: &str) -> Result<Self, CryptoError> {
        let wrapped = decode_standard(wrapped, "wrapped key")?;
        let kw = KwAes256::new_from_slice(&wrapping_key(token)).map_err(|_| CryptoError::Unwrap)?;
        let mut out = [0u8; 40];
        let key = kw.unwrap_key(&wrapped, &mut out).map_err(|_| CryptoError::Unwrap)?;
        let key: [u8; 32] = key.try_into().map_err(|_| CryptoError::Unwrap)?;
        Ok(Self(key))
    }
}

fn wrapping_key(token: &str) -> [u8; 32] {
    // HMAC zero-pads a key shorter than the hash's 64-byte block (RFC 2104 §2), so padding it here gives the
    // same MAC through the infallible fixed-size constructor.
    let mut block = [0u8; 64];
    block[..32].copy_from_slice(&WRAPPING_KEY_HMAC_KEY);
    let mut mac = <Hmac<Sha256> as hmac::KeyInit>::new(&block.into());
    mac.update(token.as_bytes());
    mac.finalize().into_bytes().into()
}

/// The tag that makes a refresh token provably one of its grant's: base64url of the first 16 bytes of
/// HMAC-SHA256 over `body` (the token without its tag) under the grant's family key. With it a token that
/// rotation retired is recognised however long ago, from a key of fixed size instead of a list of every token
/// (see `auth::rotation`).
pub fn refresh_token_tag(family_key: &str, body: &str) -> String {
    // The key is drawn by `random_string` (43 characters), under HMAC's 64-byte block; a longer one (a record
    // this server did not write) is hashed first, as RFC 2104 §2 does.
    let digest;
    let key = if family_key.len() > 64 {
        digest = Sha256::digest(family_key.as_bytes());
        digest.as_slice()
    } else {
        family_key.as_bytes()
    };
    let mut block = [0u8; 64];
    block[..key.len()].copy_from_slice(key);
    let mut mac = <Hmac<Sha256> as hmac::KeyInit>::new(&block.into());
    mac.update(body.as_bytes());
    let tag = mac.finalize().into_bytes();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&tag[..16])
}

fn zero_nonce() -> aes_gcm::Nonce<aes_gcm::aead::consts::U12> {
    aes_gcm::Nonce::default()
}

fn decode_standard(value: &str, what: &'static str) -> Result<Vec<u8>, CryptoError> {
    base64::engine::general_purpose::STANDARD.decode(value).map_err(|_| CryptoError::Base64 { what })
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 15)] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_strings_use_the_alphabet_and_differ() {
        let a = random_string(32).unwrap();
        let b = random_string(32).unwrap();
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
        assert!(a.bytes().all(|c| ALPHABET.contains(&c)));
    }

    #[test]
    fn sha256_hex_matches_the_known_vector() {
        assert_eq!(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert!(matches_hash("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
        assert!(!matches_hash("abd", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    }

    #[test]
    fn pkce_matches_rfc_7636_appendix_b() {
        assert_eq!(
            pkce_s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn pkce_values_follow_rfc_7636_grammar() {
        assert!(is_s256_challenge("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"));
        assert!(is_s256_challenge(&pkce_s256("anything")));
        for bad in [
            "",
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-c",   // 42
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cMA", // 44
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw+cM",  // standard base64
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-c=",  // padded
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cN",  // trailing bits set: not a digest's encoding
        ] {
            assert!(!is_s256_challenge(bad), "{bad}");
        }
        assert!(is_code_verifier("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"));
        assert!(is_code_verifier(&"a.b_c~d-9".repeat(15)[..128]));
        assert!(!is_code_verifier(&"a".repeat(42)));
        assert!(!is_code_verifier(&"a".repeat(129)));
        assert!(!is_code_verifier(&format!("{}+", "a".repeat(43))));
        assert!(!is_code_verifier(&format!("{} ", "a".repeat(43))));
        assert!(!is_code_verifier(&format!("{}é", "a".repeat(42))));
    }

    #[test]
    fn props_round_trip_only_with_the_right_token() {
        let key = PropsKey::generate().unwrap();
        let sealed = key.encrypt(br#"{"userId":"owner","scopes":["zotero:read"]}"#).unwrap();
        let wrapped = key.wrap_for("owner:grant:secret").unwrap();
        assert_eq!(base64::engine::general_purpose::STANDARD.decode(&wrapped).unwrap().len(), 40);
        let unwrapped = PropsKey::unwrap_with("owner:grant:secret", &wrapped).unwrap();
        assert_eq!(unwrapped.decrypt(&sealed).unwrap(), br#"{"userId":"owner","scopes":["zotero:read"]}"#);
        assert!(matches!(PropsKey::unwrap_with("owner:grant:other", &wrapped), Err(CryptoError::Unwrap)));
    }

    #[test]
    fn key_wrap_matches_rfc_3394_vector() {
        // RFC 3394 §4.6 (256-bit KEK, 256-bit key data) exercises the same AES-KW the wrapping uses.
        let kek: Vec<u8> = (0u8..32).collect();
        let data: [u8; 32] = [
            0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x00, 0x01,
            0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
        ];
        let kw = KwAes256::new_from_slice(&kek).unwrap();
        let mut out = [0u8; 40];
        let wrapped = kw.wrap_key(&data, &mut out).unwrap();
        assert_eq!(hex(wrapped), "28c9f404c4b810f4cbccb35cfb87f8263f5786e2d80ed326cbc7f0e71a99f43bfb988b9b7a02dd21");
    }

    #[test]
    fn secrets_compare_by_value() {
        assert!(secrets_equal("hunter2", "hunter2"));
        assert!(!secrets_equal("hunter2", "hunter3"));
        assert!(!secrets_equal("hunter2", "hunter22"));
        assert!(!secrets_equal("", "hunter2"));
        assert!(secrets_equal("", ""));
    }

    #[test]
    fn hashes_match_only_their_own_secret() {
        let stored = sha256_hex("owner:grant:secret");
        assert!(matches_hash("owner:grant:secret", &stored));
        assert!(!matches_hash("owner:grant:secreT", &stored));
        assert!(!matches_hash("owner:grant:secret", &stored[..63]), "a cut stored hash matches nothing");
        assert!(!matches_hash("owner:grant:secret", ""));
    }
}

//! An OIDC issuer of identity tokens for tests of a token exchange: an RSA
//! key pair, the JWKS document publishing its public key, and RS256 tokens
//! signed with it (crate feature `issuer`).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use rsa::pkcs1::{EncodeRsaPrivateKey, EncodeRsaPublicKey};
use rsa::traits::PublicKeyParts;
use serde_json::{Value, json};

/// An OIDC issuer of identity tokens: an RSA key pair and its JWKS file.
pub struct Issuer {
    key: EncodingKey,
    public_pem: String,
    /// The JWKS document publishing the public key.
    pub jwks: Value,
}

impl Issuer {
    /// A new RSA key pair published under `kid`.
    pub fn new(kid: &str) -> Issuer {
        let private = rsa::RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 2048).unwrap();
        let public = private.to_public_key();
        let jwks = json!({"keys": [{
            "kty": "RSA",
            "kid": kid,
            "use": "sig",
            "alg": "RS256",
            "n": URL_SAFE_NO_PAD.encode(public.n().to_bytes_be()),
            "e": URL_SAFE_NO_PAD.encode(public.e().to_bytes_be()),
        }]});
        Issuer {
            key: EncodingKey::from_rsa_der(private.to_pkcs1_der().unwrap().as_bytes()),
            public_pem: public.to_pkcs1_pem(Default::default()).unwrap(),
            jwks,
        }
    }

    /// The public key as PEM (for algorithm-confusion tests).
    pub fn public_pem(&self) -> &str {
        &self.public_pem
    }

    /// An RS256 identity token with these claims, signed under `key-1`.
    pub fn token(&self, claims: Value) -> String {
        let mut header = Header::new(Algorithm::RS256);
        header.kid = Some("key-1".into());
        jsonwebtoken::encode(&header, &claims, &self.key).unwrap()
    }
}

//! The one client certificate the plugin accepts: the one Terraform named
//! in `PLUGIN_CLIENT_CERT` when it started the plugin. Terraform signs with
//! a P-521 key, which ring does not verify; the `p521` crate does, and the
//! other schemes go to the crypto provider.

use std::sync::Arc;

use p521::ecdsa::signature::Verifier;
use p521::pkcs8::DecodePublicKey;
use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, Error, SignatureScheme};

/// Accepts exactly `certificate`, and signatures made with its key.
#[derive(Debug)]
pub struct Pinned {
    certificate: CertificateDer<'static>,
    provider: Arc<CryptoProvider>,
}

impl Pinned {
    pub fn new(certificate: CertificateDer<'static>, provider: Arc<CryptoProvider>) -> Self {
        Pinned {
            certificate,
            provider,
        }
    }

    fn verify_p521(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        let bad = |why: &str| Error::General(format!("the client's signature: {why}"));
        let end_entity =
            webpki::EndEntityCert::try_from(cert).map_err(|_| bad("no certificate"))?;
        let spki = end_entity.subject_public_key_info();
        let public = p521::PublicKey::from_public_key_der(spki.as_ref())
            .map_err(|_| bad("not a P-521 key"))?;
        let key = p521::ecdsa::VerifyingKey::from_sec1_bytes(
            p521::elliptic_curve::sec1::ToEncodedPoint::to_encoded_point(&public, false).as_bytes(),
        )
        .map_err(|_| bad("not a P-521 key"))?;
        let signature =
            p521::ecdsa::Signature::from_der(dss.signature()).map_err(|_| bad("malformed"))?;
        key.verify(message, &signature)
            .map_err(|_| bad("does not verify"))?;
        Ok(HandshakeSignatureValid::assertion())
    }
}

impl ClientCertVerifier for Pinned {
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, Error> {
        match end_entity.as_ref() == self.certificate.as_ref() {
            true => Ok(ClientCertVerified::assertion()),
            false => Err(Error::General(
                "not the certificate Terraform started the plugin with".to_owned(),
            )),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        match dss.scheme {
            SignatureScheme::ECDSA_NISTP521_SHA512 => self.verify_p521(message, cert, dss),
            _ => verify_tls12_signature(
                message,
                cert,
                dss,
                &self.provider.signature_verification_algorithms,
            ),
        }
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        match dss.scheme {
            SignatureScheme::ECDSA_NISTP521_SHA512 => self.verify_p521(message, cert, dss),
            _ => verify_tls13_signature(
                message,
                cert,
                dss,
                &self.provider.signature_verification_algorithms,
            ),
        }
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        let mut schemes = self
            .provider
            .signature_verification_algorithms
            .supported_schemes();
        schemes.push(SignatureScheme::ECDSA_NISTP521_SHA512);
        schemes
    }
}

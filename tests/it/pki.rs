//! A throwaway PKI for the TLS tests: a CA, a server certificate for 127.0.0.1 and localhost, one
//! for another name, and a client certificate, generated with rcgen and written to a temp dir.

use std::path::PathBuf;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};

pub struct Pki {
    pub dir: PathBuf,
    pub ca: Vec<u8>,
    pub server_cert: Vec<u8>,
    pub server_key: Vec<u8>,
    pub wrong_name_cert: Vec<u8>,
    pub wrong_name_key: Vec<u8>,
    pub client_cert: Vec<u8>,
    pub client_key: Vec<u8>,
}

fn leaf(names: &[&str], issuer: &Issuer<'_, KeyPair>) -> (Vec<u8>, Vec<u8>) {
    let key = KeyPair::generate().unwrap();
    let params =
        CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
    let cert = params.signed_by(&key, issuer).unwrap();
    (cert.pem().into_bytes(), key.serialize_pem().into_bytes())
}

impl Pki {
    pub fn new(tag: &str) -> Pki {
        let ca_key = KeyPair::generate().unwrap();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "spate test CA");
        let ca = ca_params.self_signed(&ca_key).unwrap();
        let issuer = Issuer::new(ca_params, ca_key);
        let (server_cert, server_key) = leaf(&["127.0.0.1", "localhost"], &issuer);
        let (wrong_name_cert, wrong_name_key) = leaf(&["other.test"], &issuer);
        let (client_cert, client_key) = leaf(&["client.test"], &issuer);
        let dir = std::env::temp_dir().join(format!("spate-pki-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pki = Pki {
            dir,
            ca: ca.pem().into_bytes(),
            server_cert,
            server_key,
            wrong_name_cert,
            wrong_name_key,
            client_cert,
            client_key,
        };
        for (name, bytes) in [
            ("ca.pem", &pki.ca),
            ("client.pem", &pki.client_cert),
            ("client-key.pem", &pki.client_key),
        ] {
            std::fs::write(pki.dir.join(name), bytes).unwrap();
        }
        pki
    }

    pub fn path(&self, name: &str) -> String {
        self.dir.join(name).to_string_lossy().into_owned()
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

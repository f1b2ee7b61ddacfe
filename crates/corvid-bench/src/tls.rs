//! A throwaway certificate authority and a server certificate for `127.0.0.1`, made with the
//! `openssl` command, so the mock can serve HTTP/2 over TLS as real providers do (corvid
//! negotiates HTTP/2 with them by ALPN and shares one connection among its streams).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use anyhow::{Context as _, bail};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

/// The files of a certificate authority and of one server certificate it signed.
pub(crate) struct TestCa {
    /// Holds the files; removed when dropped.
    _dir: tempfile::TempDir,
    /// The authority's certificate: what a client must trust (`SSL_CERT_FILE`).
    pub(crate) ca: PathBuf,
    /// The server's certificate (for `127.0.0.1`) and its key.
    pub(crate) cert: PathBuf,
    pub(crate) key: PathBuf,
}

impl TestCa {
    /// Makes the authority and the server certificate (P-256 keys, valid one day).
    pub(crate) fn new() -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        let at = |name: &str| dir.path().join(name);
        openssl(
            &[
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-days",
                "1",
                "-subj",
                "/CN=corvid-bench CA",
            ],
            &[("-keyout", &at("ca.key")), ("-out", &at("ca.pem"))],
        )?;
        openssl(
            &[
                "req",
                "-new",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-subj",
                "/CN=127.0.0.1",
            ],
            &[("-keyout", &at("server.key")), ("-out", &at("server.csr"))],
        )?;
        std::fs::write(
            at("server.ext"),
            "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n\
             extendedKeyUsage=serverAuth\n",
        )?;
        openssl(
            &["x509", "-req", "-days", "1", "-CAcreateserial"],
            &[
                ("-in", &at("server.csr")),
                ("-CA", &at("ca.pem")),
                ("-CAkey", &at("ca.key")),
                ("-extfile", &at("server.ext")),
                ("-out", &at("server.pem")),
            ],
        )?;
        Ok(Self {
            ca: at("ca.pem"),
            cert: at("server.pem"),
            key: at("server.key"),
            _dir: dir,
        })
    }
}

fn openssl(arguments: &[&str], paths: &[(&str, &Path)]) -> anyhow::Result<()> {
    let mut command = Command::new("openssl");
    command.args(arguments);
    for (flag, path) in paths {
        command.arg(flag).arg(path);
    }
    let output = command
        .output()
        .context("run `openssl` (the TLS mock needs it to make a certificate)")?;
    if !output.status.success() {
        bail!(
            "openssl {} failed: {}",
            arguments.first().unwrap_or(&""),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(())
}

/// A TLS acceptor for `cert` and `key` that offers only HTTP/2.
pub(crate) fn acceptor(cert: &Path, key: &Path) -> anyhow::Result<TlsAcceptor> {
    let chain = CertificateDer::pem_file_iter(cert)
        .context("read the server certificate")?
        .collect::<Result<Vec<_>, _>>()?;
    let key = PrivateKeyDer::from_pem_file(key).context("read the server key")?;
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(chain, key)?;
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

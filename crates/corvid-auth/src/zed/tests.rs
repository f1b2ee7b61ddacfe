use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::{URL_SAFE, URL_SAFE_NO_PAD};
use corvid_test_support::oauth::http_get;
use corvid_test_support::zed_cloud::{EncryptionScheme, MockZedCloud};
use pretty_assertions::assert_eq;
use rsa::pkcs1::{DecodeRsaPublicKey, EncodeRsaPublicKey};
use rsa::sha2::Sha256;

use super::*;
use crate::test_util::{MemoryKeyring, load_from, read_env_file, write_env_file};
use crate::{Secret, TokenSource};

/// One 2048-bit key shared by the tests that only decrypt (key generation is the slow part).
fn shared_key() -> &'static ZedKeyPair {
    static KEY: std::sync::OnceLock<ZedKeyPair> = std::sync::OnceLock::new();
    KEY.get_or_init(|| ZedKeyPair::generate().unwrap())
}

fn public_key_of(pair: &ZedKeyPair) -> rsa::PublicKey {
    let der = URL_SAFE.decode(pair.public_key()).unwrap();
    rsa::PublicKey::from_pkcs1_der(&der).unwrap()
}

const TOKEN: &str = r#"{"version":1,"id":7,"token":"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}"#;

#[test]
fn the_public_key_is_pkcs1_der_in_url_safe_base64() {
    let pair = shared_key();
    // 2048 bits: 270 DER bytes, 360 characters, never padded.
    assert_eq!(pair.public_key().len(), 360);
    assert!(!pair.public_key().contains(['+', '/', '=']));
    let der = URL_SAFE.decode(pair.public_key()).unwrap();
    assert_eq!(der.len(), 270);
    let public = rsa::PublicKey::from_pkcs1_der(&der).unwrap();
    assert_eq!(public.to_pkcs1_der().unwrap().as_bytes(), der.as_slice());
}

/// Zed's `test_encode_and_decode_base64_public_key` uses a 1024-bit key: its encoding must
/// round-trip too, and a 1024-bit key's DER (140 bytes) needs one `=` of padding.
#[test]
fn a_1024_bit_key_round_trips_like_zeds_test_vector() {
    let private = rsa::PrivateKey::new(&mut getrandom::SysRng, 1024).unwrap();
    let pair = ZedKeyPair::from_private_key(private).unwrap();
    let der = URL_SAFE.decode(pair.public_key()).unwrap();
    assert_eq!(der.len() % 3, 2);
    assert!(pair.public_key().ends_with('='));
    assert_eq!(
        rsa::PublicKey::from_pkcs1_der(&der).unwrap(),
        public_key_of(&pair)
    );
    let ciphertext = public_key_of(&pair)
        .oaep_encrypt::<Sha256>(b"secret")
        .unwrap();
    let (token, format) = pair.decrypt(&URL_SAFE.encode(ciphertext)).unwrap();
    assert_eq!((token.expose(), format), ("secret", TokenFormat::Oaep));
}

#[test]
fn decrypts_oaep_and_pkcs1v15_padded_or_not() {
    let pair = shared_key();
    let public = public_key_of(pair);
    let oaep = public.oaep_encrypt::<Sha256>(TOKEN.as_bytes()).unwrap();
    let legacy = public.pkcs1v15_encrypt(TOKEN.as_bytes()).unwrap();
    assert_eq!(oaep.len(), 256);
    for (ciphertext, format) in [(oaep, TokenFormat::Oaep), (legacy, TokenFormat::Pkcs1v15)] {
        let padded = URL_SAFE.encode(&ciphertext);
        assert!(padded.ends_with("=="));
        let unpadded = URL_SAFE_NO_PAD.encode(&ciphertext);
        for text in [padded, unpadded] {
            let (token, got) = pair.decrypt(&text).unwrap();
            assert_eq!(token.expose(), TOKEN, "kept verbatim");
            assert_eq!(got, format);
        }
    }
}

#[test]
fn a_token_for_another_key_or_garbage_is_refused() {
    let pair = shared_key();
    let other = rsa::PrivateKey::new(&mut getrandom::SysRng, 1024).unwrap();
    let ciphertext = other.to_public_key().oaep_encrypt::<Sha256>(b"x").unwrap();
    assert!(matches!(
        pair.decrypt(&URL_SAFE.encode(ciphertext)),
        Err(ZedLoginError::Decrypt)
    ));
    // 256 random bytes: OAEP fails, PKCS#1 v1.5's implicit rejection yields random bytes that
    // are not printable text.
    let garbage: [u8; 32] = rand::random();
    let garbage: Vec<u8> = garbage.iter().cycle().take(256).copied().collect();
    assert!(matches!(
        pair.decrypt(&URL_SAFE.encode(garbage)),
        Err(ZedLoginError::Decrypt)
    ));
    assert!(matches!(
        pair.decrypt("not base64!"),
        Err(ZedLoginError::InvalidEncoding)
    ));
}

/// Run with `--nocapture` (debug and `--release`) to see the timing in the report.
#[tokio::test]
async fn key_generation_runs_off_the_runtime_and_is_quick() {
    let started = Instant::now();
    let mut times = Vec::new();
    for _ in 0..3 {
        let one = Instant::now();
        let pair = ZedKeyPair::generate_off_runtime().await.unwrap();
        times.push(one.elapsed());
        assert_eq!(pair.public_key().len(), 360);
    }
    eprintln!(
        "RSA-2048 key generation: {:?} (3 keys, {:?} in all)",
        times,
        started.elapsed()
    );
}

#[test]
fn system_ids_are_uuid_v4() {
    let id = new_system_id();
    assert!(is_uuid(&id), "{id}");
    assert_eq!(id.len(), 36);
    assert_eq!(&id[14..15], "4");
    assert!(matches!(&id[19..20], "8" | "9" | "a" | "b"));
    assert_ne!(new_system_id(), id);
    assert!(!is_uuid("not-a-uuid"));
    assert!(is_uuid("2F6E1C9A-3B7D-4C1E-9A55-0D7C2B8E4F10"));
}

#[test]
fn the_sign_in_url_is_form_encoded_on_the_web_host() {
    let url = sign_in_url("https://zed.dev/", 4567, "ab-_cd==", Some("sys-1"));
    assert_eq!(
        url,
        "https://zed.dev/native_app_signin?native_app_port=4567&native_app_public_key=ab-_cd%3D%3D&system_id=sys-1"
    );
    assert_eq!(
        sign_in_url("http://127.0.0.1:9", 1, "k", None),
        "http://127.0.0.1:9/native_app_signin?native_app_port=1&native_app_public_key=k"
    );
}

#[test]
fn hosts_follow_the_server_url_as_zed_maps_it() {
    assert_eq!(
        ZedHosts::default(),
        ZedHosts {
            web: "https://zed.dev".into(),
            cloud: "https://cloud.zed.dev".into(),
            llm: "https://cloud.zed.dev".into(),
        }
    );
    assert_eq!(
        ZedHosts::from_server_url("https://staging.zed.dev").llm,
        "https://llm-staging.zed.dev"
    );
    assert_eq!(
        ZedHosts::from_server_url("http://localhost:3000").cloud,
        "http://localhost:8787"
    );
    assert_eq!(
        ZedHosts::from_server_url("http://127.0.0.1:5/"),
        ZedHosts::single("http://127.0.0.1:5")
    );
    assert_eq!(
        ZedHosts::single("http://h").success_url(),
        "http://h/native_app_signin_succeeded"
    );
}

/// Signs in against the mock, which plays the browser: it encrypts the token to the key in the
/// sign-in URL and sends the browser to the loopback callback.
async fn sign_in(cloud: &MockZedCloud) -> (ZedCredentials, String, u16) {
    let (tx, rx) = tokio::sync::oneshot::channel::<String>();
    let tx = Mutex::new(Some(tx));
    let mut options = ZedLogin::new(ZedHosts::single(&cloud.base_url()), move |url: &str| {
        if let Some(tx) = tx.lock().unwrap().take() {
            let _ = tx.send(url.to_owned());
        }
    });
    options.system_id = Some("5d0c5f1e-8a3b-4c2d-9e1f-0a1b2c3d4e5f".into());
    options.key_pair = Some(ZedKeyPair::from_private_key(shared_key().private.clone()).unwrap());
    options.timeout = Duration::from_secs(20);
    let login = tokio::spawn(login_zed(options));
    let url = rx.await.unwrap();
    let port: u16 = url::Url::parse(&url)
        .unwrap()
        .query_pairs()
        .find(|(k, _)| k == "native_app_port")
        .unwrap()
        .1
        .parse()
        .unwrap();
    // A favicon request on the callback port first: skipped, not fatal.
    let favicon = http_get(&format!("http://127.0.0.1:{port}/favicon.ico"))
        .await
        .unwrap();
    assert_eq!(favicon.status, 404);
    let visit = cloud.play_browser(&url).await.unwrap();
    assert_eq!(visit.callback.status, 302);
    assert_eq!(
        visit.callback.header("location"),
        Some(format!("{}/native_app_signin_succeeded", cloud.base_url()).as_str())
    );
    assert_eq!(visit.callback.body, "");
    (login.await.unwrap().unwrap(), url, port)
}

#[tokio::test]
async fn sign_in_end_to_end_with_oaep_and_with_pkcs1v15() {
    for scheme in [EncryptionScheme::Oaep, EncryptionScheme::Pkcs1v15] {
        let cloud = MockZedCloud::start().await;
        cloud.set_encryption(scheme);
        let (credentials, url, _port) = sign_in(&cloud).await;
        assert_eq!(
            credentials,
            ZedCredentials {
                user_id: "42".into(),
                access_token: Secret::new(cloud.account_token()),
                system_id: Some("5d0c5f1e-8a3b-4c2d-9e1f-0a1b2c3d4e5f".into()),
            },
            "{scheme:?}"
        );
        // The mock saw the key and the system id the URL carried.
        let visits = cloud.sign_in_queries();
        assert_eq!(visits.len(), 1);
        assert_eq!(
            visits[0].get("native_app_public_key").map(String::as_str),
            Some(shared_key().public_key())
        );
        assert_eq!(
            visits[0].get("system_id").map(String::as_str),
            Some("5d0c5f1e-8a3b-4c2d-9e1f-0a1b2c3d4e5f")
        );
        assert!(url.starts_with(&format!("{}/native_app_signin?", cloud.base_url())));
    }
}

#[tokio::test]
async fn the_callback_is_read_on_any_path_and_the_sign_in_generates_a_system_id() {
    let pair = ZedKeyPair::from_private_key(shared_key().private.clone()).unwrap();
    let ciphertext = public_key_of(&pair)
        .oaep_encrypt::<Sha256>(TOKEN.as_bytes())
        .unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<String>();
    let tx = Mutex::new(Some(tx));
    let mut options = ZedLogin::new(ZedHosts::single("http://web.invalid"), move |url: &str| {
        if let Some(tx) = tx.lock().unwrap().take() {
            let _ = tx.send(url.to_owned());
        }
    });
    options.key_pair = Some(pair);
    let login = tokio::spawn(login_zed(options));
    let url = url::Url::parse(&rx.await.unwrap()).unwrap();
    let get = |name: &str| {
        url.query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    };
    let port = get("native_app_port").unwrap();
    let system_id = get("system_id").unwrap();
    assert!(is_uuid(&system_id));
    // The padding arrives form-encoded (`%3D%3D`), on an odd path.
    let token = URL_SAFE.encode(ciphertext).replace('=', "%3D");
    let reply = http_get(&format!(
        "http://127.0.0.1:{port}/some/where?user_id=42&access_token={token}"
    ))
    .await
    .unwrap();
    assert_eq!(reply.status, 302);
    assert_eq!(
        reply.header("location"),
        Some("http://web.invalid/native_app_signin_succeeded")
    );
    let credentials = login.await.unwrap().unwrap();
    assert_eq!(credentials.access_token.expose(), TOKEN);
    assert_eq!(credentials.system_id, Some(system_id));
}

#[tokio::test]
async fn an_error_callback_ends_the_sign_in() {
    let (tx, rx) = tokio::sync::oneshot::channel::<String>();
    let tx = Mutex::new(Some(tx));
    let mut options = ZedLogin::new(ZedHosts::single("http://web.invalid"), move |url: &str| {
        if let Some(tx) = tx.lock().unwrap().take() {
            let _ = tx.send(url.to_owned());
        }
    });
    options.key_pair = Some(ZedKeyPair::from_private_key(shared_key().private.clone()).unwrap());
    let login = tokio::spawn(login_zed(options));
    let url = url::Url::parse(&rx.await.unwrap()).unwrap();
    let port = url
        .query_pairs()
        .find(|(k, _)| k == "native_app_port")
        .unwrap()
        .1
        .into_owned();
    let reply = http_get(&format!("http://127.0.0.1:{port}/?error=access_denied"))
        .await
        .unwrap();
    assert_eq!(reply.status, 400);
    let err = login.await.unwrap().unwrap_err();
    assert!(matches!(&err, ZedLoginError::Denied { error } if error == "access_denied"));
    assert!(err.to_string().contains("corvid login zed"));
}

#[tokio::test]
async fn the_sign_in_times_out_clearly() {
    let mut options = ZedLogin::new(ZedHosts::single("http://web.invalid"), |_: &str| {});
    options.key_pair = Some(ZedKeyPair::from_private_key(shared_key().private.clone()).unwrap());
    options.timeout = Duration::from_millis(200);
    let err = login_zed(options).await.unwrap_err();
    assert!(matches!(err, ZedLoginError::TimedOut { .. }));
    let message = err.to_string();
    assert!(message.contains("timed out") && message.contains("corvid login zed"));
}

fn credentials() -> ZedCredentials {
    ZedCredentials {
        user_id: "42".into(),
        access_token: Secret::new(TOKEN),
        system_id: Some("5d0c5f1e-8a3b-4c2d-9e1f-0a1b2c3d4e5f".into()),
    }
}

#[test]
fn the_store_writes_the_env_file_0600_and_sign_out_keeps_the_system_id() {
    let home = tempfile::tempdir().unwrap();
    write_env_file(home.path(), "# mine\nXAI_API_KEY=k\n");
    let keyring = Arc::new(MemoryKeyring::default());
    let store = ZedStore::new(home.path().join("env"), Some(keyring.clone()));
    store.save(&credentials()).unwrap();
    let text = read_env_file(home.path());
    assert!(text.starts_with("# mine\nXAI_API_KEY=k\nZED_USER_ID=42\nZED_ACCESS_TOKEN="));
    assert!(text.ends_with("ZED_SYSTEM_ID=5d0c5f1e-8a3b-4c2d-9e1f-0a1b2c3d4e5f\n"));
    corvid_test_support::modes::assert_owner_only(&home.path().join("env"));
    // The token survives the file's quoting exactly.
    assert_eq!(
        store.load().unwrap(),
        Some((credentials(), TokenSource::EnvFile))
    );
    let loaded = load_from(home.path(), &[]);
    assert_eq!(
        zed_credentials_from_loaded(&loaded, &store),
        Some((credentials(), TokenSource::EnvFile))
    );
    let loaded = load_from(home.path(), &[("ZED_ACCESS_TOKEN", "from-env")]);
    let (from_env, source) = zed_credentials_from_loaded(&loaded, &store).unwrap();
    assert_eq!(
        (from_env.access_token.expose(), source),
        ("from-env", TokenSource::Environment)
    );

    // Another token was refused: a newer sign-in is left alone.
    assert!(!store.clear_if_token(&Secret::new("old")).unwrap());
    assert_eq!(
        store.clear().unwrap(),
        vec![ZED_USER_ID_VAR, ZED_ACCESS_TOKEN_VAR]
    );
    assert_eq!(
        read_env_file(home.path()),
        "# mine\nXAI_API_KEY=k\nZED_SYSTEM_ID=5d0c5f1e-8a3b-4c2d-9e1f-0a1b2c3d4e5f\n"
    );
    assert_eq!(store.load().unwrap(), None);
    assert!(keyring.0.lock().unwrap().is_empty());
    assert_eq!(
        store.system_id().unwrap(),
        "5d0c5f1e-8a3b-4c2d-9e1f-0a1b2c3d4e5f"
    );
}

#[test]
fn the_keyring_copy_is_read_when_the_file_has_no_sign_in() {
    let home = tempfile::tempdir().unwrap();
    let keyring = Arc::new(MemoryKeyring::default());
    let store = ZedStore::new(home.path().join("env"), Some(keyring));
    store.save(&credentials()).unwrap();
    let file_only = ZedStore::file_only(home.path().join("env"));
    file_only.clear().unwrap();
    assert_eq!(
        store.load().unwrap(),
        Some((credentials(), TokenSource::Keyring))
    );
    let loaded = load_from(home.path(), &[]);
    assert_eq!(
        zed_credentials_from_loaded(&loaded, &store),
        Some((credentials(), TokenSource::Keyring))
    );
}

#[test]
fn a_system_id_is_made_once_and_kept() {
    let home = tempfile::tempdir().unwrap();
    let store = ZedStore::file_only(home.path().join("env"));
    let first = store.system_id().unwrap();
    assert!(is_uuid(&first));
    assert_eq!(store.system_id().unwrap(), first);
    assert_eq!(
        read_env_file(home.path()),
        format!("ZED_SYSTEM_ID={first}\n")
    );
    // A sign-in needs both the user id and the token.
    assert_eq!(store.load().unwrap(), None);
    assert_eq!(
        zed_credentials_from(|name| (name == ZED_USER_ID_VAR).then(|| "42".to_owned())),
        None
    );
}

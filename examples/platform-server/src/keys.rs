//! Server secrets kept in the data directory, created on first start.

use std::fs;
use std::io::Write;
use std::path::Path;

use rand::RngCore;
use runtime::auth::ApiTokens;
use runtime::paging::PageTokens;

const PAGE_TOKEN_KEY: &str = "page-token.key";
const API_TOKEN_KEY: &str = "api-token.key";

/// The page-token signer, with a key that survives restarts (so tokens do).
pub fn page_tokens(data_dir: &Path) -> Result<PageTokens, String> {
    Ok(PageTokens::new(secret(&data_dir.join(PAGE_TOKEN_KEY))?))
}

/// The API-token signer for the API at `base_url`, with a key kept in the data dir.
pub fn api_tokens(data_dir: &Path, base_url: &str) -> Result<ApiTokens, String> {
    Ok(ApiTokens::new(
        &secret(&data_dir.join(API_TOKEN_KEY))?,
        base_url,
    ))
}

/// Whether a server has already kept its API-token key in `data_dir`.
pub fn has_api_token_key(data_dir: &Path) -> bool {
    data_dir.join(API_TOKEN_KEY).is_file()
}

/// Reads a 32-byte secret, creating it (readable by the owner only) if missing.
fn secret(path: &Path) -> Result<[u8; 32], String> {
    match fs::read(path) {
        Ok(bytes) => bytes.try_into().map_err(|_| {
            format!(
                "{} is not a 32-byte key; delete it to create a new one",
                path.display()
            )
        }),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            let mut key = [0u8; 32];
            rand::rng().fill_bytes(&mut key);
            write_private(path, &key, false)
                .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
            Ok(key)
        }
        Err(error) => Err(format!("cannot read {}: {error}", path.display())),
    }
}

/// Writes a file readable by its owner only, durably; `replace` allows
/// overwriting an existing file.
pub fn write_private(path: &Path, contents: &[u8], replace: bool) -> std::io::Result<()> {
    let mut options = fs::OpenOptions::new();
    options.write(true);
    if replace {
        options.create(true).truncate(true);
    } else {
        options.create_new(true);
    }
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(contents)?;
    file.sync_all()
}

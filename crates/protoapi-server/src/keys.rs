//! Server signing keys (API tokens, page tokens), kept in a keys directory
//! and created on first start.
//!
//! Replicas of one service share the keys directory (or a copy of it), so an
//! API token or a page token signed by one is accepted by the others. Each key
//! is a file of 32 random bytes, created once: a new key is written to a
//! temporary file and then linked to its name, which fails if another server
//! created the key first; the loser reads the winner's key. A directory whose
//! keys were provisioned beforehand (a mounted secret) may be read-only. Keys
//! are readable by their owner only; one readable by others is restricted
//! when read (or, if it cannot be changed, reported).

use std::fs;
use std::path::Path;

use rand::RngCore;

use crate::tokens::ApiTokens;
use protoapi_core::owner_only;
use protoapi_core::paging::PageTokens;

const PAGE_TOKEN_KEY: &str = "page-token.key";
const API_TOKEN_KEY: &str = "api-token.key";
const KEY_LEN: usize = 32;

/// The page-token signer, with a key that survives restarts (so tokens do).
pub fn page_tokens(keys_dir: &Path) -> Result<PageTokens, String> {
    Ok(PageTokens::new(secret(keys_dir, PAGE_TOKEN_KEY)?))
}

/// The API-token signer for the API at `base_url`, with a key kept in the keys dir.
pub fn api_tokens(keys_dir: &Path, base_url: &str) -> Result<ApiTokens, String> {
    Ok(ApiTokens::new(&secret(keys_dir, API_TOKEN_KEY)?, base_url))
}

/// Whether a server has already kept its API-token key in `keys_dir`.
pub fn has_api_token_key(keys_dir: &Path) -> bool {
    keys_dir.join(API_TOKEN_KEY).is_file()
}

/// Reads the 32-byte secret `name` in `dir`, creating it (readable by the
/// owner only) if missing. Of servers creating it together, all end up with
/// the one key that was created first.
pub fn secret(dir: &Path, name: &str) -> Result<[u8; KEY_LEN], String> {
    let path = dir.join(name);
    if let Some(key) = read_key(&path)? {
        owner_only::restrict_file(&path);
        return Ok(key);
    }
    let mut key = [0u8; KEY_LEN];
    rand::rng().fill_bytes(&mut key);
    let temporary = dir.join(format!(".{name}.{:016x}.new", rand::rng().next_u64()));
    owner_only::write_new(&temporary, &key)
        .map_err(|e| format!("cannot create {}: {e}", temporary.display()))?;
    // `link` never replaces an existing file (unlike `rename`), so of servers
    // creating the key together exactly one succeeds.
    let linked = fs::hard_link(&temporary, &path);
    fs::remove_file(&temporary).ok();
    match linked {
        Ok(()) => {
            owner_only::sync_dir(dir).map_err(|e| format!("cannot sync {}: {e}", dir.display()))?;
            Ok(key)
        }
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => read_key(&path)?
            .ok_or_else(|| format!("{} disappeared while being created", path.display())),
        Err(error) => Err(format!(
            "cannot create {}: {error} (a file system without hard links needs the key \
             created beforehand: 32 random bytes)",
            path.display()
        )),
    }
}

/// The key at `path`, or `None` if there is no file.
fn read_key(path: &Path) -> Result<Option<[u8; KEY_LEN]>, String> {
    match fs::read(path) {
        Ok(bytes) => bytes.try_into().map(Some).map_err(|_| {
            format!(
                "{} is not a 32-byte key; delete it to create a new one",
                path.display()
            )
        }),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(format!("cannot read {}: {error}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_creating_a_key_together_end_up_with_the_same_key() {
        for _ in 0..20 {
            let dir = tempfile::tempdir().unwrap();
            let barrier = std::sync::Barrier::new(8);
            let keys: Vec<[u8; KEY_LEN]> = std::thread::scope(|scope| {
                let handles: Vec<_> = (0..8)
                    .map(|_| {
                        scope.spawn(|| {
                            barrier.wait();
                            secret(dir.path(), API_TOKEN_KEY).unwrap()
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            assert!(keys.iter().all(|key| *key == keys[0]));
            assert_eq!(
                std::fs::read(dir.path().join(API_TOKEN_KEY)).unwrap(),
                keys[0]
            );
            let leftovers: Vec<_> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|entry| entry.unwrap().file_name())
                .collect();
            assert_eq!(leftovers, [API_TOKEN_KEY], "no temporary files remain");
        }
    }

    #[test]
    fn a_provisioned_key_is_read_and_a_malformed_one_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(PAGE_TOKEN_KEY), [7u8; KEY_LEN]).unwrap();
        assert_eq!(secret(dir.path(), PAGE_TOKEN_KEY).unwrap(), [7u8; KEY_LEN]);
        std::fs::write(dir.path().join(API_TOKEN_KEY), b"short").unwrap();
        let error = secret(dir.path(), API_TOKEN_KEY).unwrap_err();
        assert!(error.contains("not a 32-byte key"), "{error}");
    }

    #[cfg(unix)]
    #[test]
    fn keys_are_readable_by_their_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        secret(dir.path(), API_TOKEN_KEY).unwrap();
        let mode = std::fs::metadata(dir.path().join(API_TOKEN_KEY))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[cfg(unix)]
    #[test]
    fn a_key_readable_by_others_is_restricted_when_read() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(PAGE_TOKEN_KEY);
        std::fs::write(&path, [7u8; KEY_LEN]).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(secret(dir.path(), PAGE_TOKEN_KEY).unwrap(), [7u8; KEY_LEN]);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

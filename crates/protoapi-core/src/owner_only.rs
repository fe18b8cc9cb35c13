//! Files only their owner may read: a server's data directory is 0700 and
//! every file it keeps there (database, keys, tokens) is 0600. New files are
//! created so; a directory or file an earlier release left readable by
//! others is restricted when the server next uses it, and one that cannot
//! be changed (not the server's, a read-only mount) is only reported.

use std::fs;
use std::io::Write;
use std::path::Path;

use rand::RngCore;

#[cfg(unix)]
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};

const DIR_MODE: u32 = 0o700;
const FILE_MODE: u32 = 0o600;

/// Creates `dir` (and any missing parent) readable by its owner only.
pub fn create_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    builder.mode(DIR_MODE);
    builder.create(dir)
}

/// Creates `dir` readable by its owner only, or restricts it to its owner
/// if it exists: the data directory, which holds the server's secrets.
pub fn own_dir(dir: &Path) -> std::io::Result<()> {
    create_dir(dir)?;
    restrict(dir, DIR_MODE);
    Ok(())
}

/// Creates the empty file `path` readable by its owner only, or restricts
/// it to its owner if it exists.
pub fn own_file(path: &Path) -> std::io::Result<()> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    options.mode(FILE_MODE);
    match options.open(path) {
        Ok(file) => file.sync_all(),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
            restrict_file(path);
            Ok(())
        }
        Err(error) => Err(error),
    }
}

/// Restricts the file at `path`, if there is one, to its owner. A file that
/// cannot be changed (not the server's, a read-only mount) is only
/// reported: the server still starts.
pub fn restrict_file(path: &Path) {
    restrict(path, FILE_MODE);
}

#[cfg(unix)]
fn restrict(path: &Path, mode: u32) {
    let metadata = match fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return,
        Err(error) => {
            tracing::warn!(path = %path.display(), "cannot read the permissions: {error}");
            return;
        }
    };
    let current = metadata.permissions().mode() & 0o777;
    if current & !mode == 0 {
        return;
    }
    match fs::set_permissions(path, fs::Permissions::from_mode(current & mode)) {
        Ok(()) => tracing::info!(
            path = %path.display(),
            from = format!("{current:o}"),
            to = format!("{:o}", current & mode),
            "restricted to its owner"
        ),
        Err(error) => tracing::warn!(
            path = %path.display(),
            mode = format!("{current:o}"),
            "readable by others than its owner, and cannot be restricted: {error}"
        ),
    }
}

#[cfg(not(unix))]
fn restrict(_: &Path, _: u32) {}

/// Writes a new file readable by its owner only, durably.
pub fn write_new(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    options.mode(FILE_MODE);
    let mut file = options.open(path)?;
    file.write_all(contents)?;
    file.sync_all()
}

/// Replaces `path` with `contents` (owner-only) atomically: readers see the
/// old file or the new one, never a partial write.
pub fn replace(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let name = path
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or("file");
    let temporary = path.with_file_name(format!(".{name}.{:016x}.new", rand::rng().next_u64()));
    write_new(&temporary, contents)?;
    fs::rename(&temporary, path).inspect_err(|_| {
        fs::remove_file(&temporary).ok();
    })?;
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => sync_dir(dir),
        _ => Ok(()),
    }
}

/// Makes a new directory entry durable.
pub fn sync_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    fs::File::open(dir)?.sync_all()?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn new_directories_and_files_are_the_owners_only() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("a/data");
        own_dir(&data).unwrap();
        assert_eq!(mode(&data), 0o700);
        assert_eq!(mode(&dir.path().join("a")), 0o700);
        own_file(&data.join("db")).unwrap();
        assert_eq!(mode(&data.join("db")), 0o600);
        write_new(&data.join("key"), b"k").unwrap();
        assert_eq!(mode(&data.join("key")), 0o600);
        replace(&data.join("token"), b"t").unwrap();
        assert_eq!(mode(&data.join("token")), 0o600);
    }

    #[test]
    fn looser_ones_are_restricted_and_stricter_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        fs::create_dir(&data).unwrap();
        fs::set_permissions(&data, fs::Permissions::from_mode(0o755)).unwrap();
        fs::write(data.join("db"), b"").unwrap();
        fs::set_permissions(data.join("db"), fs::Permissions::from_mode(0o664)).unwrap();
        fs::write(data.join("key"), b"").unwrap();
        fs::set_permissions(data.join("key"), fs::Permissions::from_mode(0o400)).unwrap();
        own_dir(&data).unwrap();
        own_file(&data.join("db")).unwrap();
        restrict_file(&data.join("key"));
        restrict_file(&data.join("missing"));
        assert_eq!(mode(&data), 0o700);
        assert_eq!(mode(&data.join("db")), 0o600);
        assert_eq!(mode(&data.join("key")), 0o400);
        assert!(!data.join("missing").exists());
    }
}

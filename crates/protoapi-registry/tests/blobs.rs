//! Both blob stores keep the same promises: an upload becomes its blob only
//! as the bytes that were checked, a chunk cut off can be resumed, set-aside
//! blobs are unreadable until restored. On disk ([`FsBlobs`]) and in object
//! storage ([`ObjectBlobs`], here over the in-memory and local-file stores
//! `object_store` ships).

use std::sync::Arc;

use axum::body::Body;
use bytes::Bytes;
use http_body_util::BodyExt as _;
use protoapi_registry::{AppendError, BlobStore, Digest, FsBlobs, ObjectBlobs, VerifyError};

/// Each store under test, with a directory it may use.
fn stores(dir: &std::path::Path) -> Vec<(&'static str, Arc<dyn BlobStore>)> {
    let local = object_store::local::LocalFileSystem::new_with_prefix(dir).unwrap();
    std::fs::create_dir_all(dir.join("fs")).unwrap();
    vec![
        ("disk", Arc::new(FsBlobs::open(&dir.join("fs")).unwrap())),
        (
            "memory objects",
            Arc::new(ObjectBlobs::new(
                Arc::new(object_store::memory::InMemory::new()),
                "reg",
            )),
        ),
        (
            "local objects",
            Arc::new(ObjectBlobs::new(Arc::new(local), "objects")),
        ),
    ]
}

async fn read_all(store: &dyn BlobStore, digest: &Digest, start: u64, len: Option<u64>) -> Vec<u8> {
    let contents = store
        .read(digest, start, len)
        .await
        .unwrap()
        .expect("stored");
    contents.body.collect().await.unwrap().to_bytes().to_vec()
}

const ID: &str = "0123456789abcdef0123456789abcdef";

#[tokio::test]
async fn chunks_become_the_blob_they_were_checked_to_be() {
    let dir = tempfile::tempdir().unwrap();
    for (name, store) in stores(dir.path()) {
        let whole = b"hello, registry".to_vec();
        let digest = Digest::of(&whole);
        store.start_upload(ID).await.unwrap();
        assert_eq!(store.upload_len(ID).await.unwrap(), Some(0), "{name}");
        assert_eq!(
            store
                .append(ID, Body::from(whole[..5].to_vec()), 1 << 20)
                .await
                .unwrap(),
            5
        );
        assert_eq!(
            store
                .append(ID, Body::from(whole[5..].to_vec()), 1 << 20)
                .await
                .unwrap(),
            15
        );
        assert_eq!(store.upload_len(ID).await.unwrap(), Some(15), "{name}");

        let wrong = Digest::of(b"something else");
        match store.verify(ID, &wrong).await {
            Err(VerifyError::Mismatch(actual)) => assert_eq!(actual, digest, "{name}"),
            _ => panic!("{name}: another digest is refused"),
        }
        assert_eq!(
            store.size(&digest).await.unwrap(),
            None,
            "{name}: nothing stored yet"
        );

        let verified = store.verify(ID, &digest).await.map_err(|_| ()).unwrap();
        assert_eq!(verified.size(), 15);
        verified.store().await.unwrap();
        assert_eq!(store.size(&digest).await.unwrap(), Some(15), "{name}");
        assert_eq!(read_all(&*store, &digest, 0, None).await, whole, "{name}");
        assert_eq!(
            read_all(&*store, &digest, 7, Some(8)).await,
            b"registry",
            "{name}"
        );
        let listed = store.list().await.unwrap();
        assert_eq!(
            listed.iter().map(|(d, _)| d).collect::<Vec<_>>(),
            [&digest],
            "{name}"
        );
        assert_ne!(
            store.upload_len(ID).await.unwrap(),
            Some(15),
            "{name}: the upload is gone"
        );
    }
}

#[tokio::test]
async fn bytes_sent_after_the_check_never_reach_the_blob() {
    let dir = tempfile::tempdir().unwrap();
    for (name, store) in stores(dir.path()) {
        let genuine = b"the layer everyone shares".to_vec();
        let digest = Digest::of(&genuine);
        store.start_upload(ID).await.unwrap();
        store
            .append(ID, Body::from(genuine.clone()), 1 << 20)
            .await
            .unwrap();
        let verified = store.verify(ID, &digest).await.map_err(|_| ()).unwrap();
        // Another request on the same upload, between the check and the store.
        match store.append(ID, Body::from("garbage"), 1 << 20).await {
            Err(AppendError::Busy) => {}
            Ok(_) => {}
            Err(other) => panic!("{name}: {other:?}"),
        }
        verified.store().await.unwrap();
        assert_eq!(read_all(&*store, &digest, 0, None).await, genuine, "{name}");
        store.discard(ID).await.unwrap();
    }
}

#[tokio::test]
async fn a_chunk_cut_off_is_resumed_from_the_length_kept() {
    let dir = tempfile::tempdir().unwrap();
    for (name, store) in stores(dir.path()) {
        let whole: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let digest = Digest::of(&whole);
        store.start_upload(ID).await.unwrap();
        let first = Bytes::copy_from_slice(&whole[..100_000]);
        let cut =
            futures_util::stream::iter([Ok(first), Err(std::io::Error::other("connection reset"))]);
        match store.append(ID, Body::from_stream(cut), 1 << 20).await {
            Err(AppendError::Body) => {}
            other => panic!("{name}: {other:?}"),
        }
        let kept = store.upload_len(ID).await.unwrap().unwrap();
        assert!(kept == 0 || kept == 100_000, "{name}: {kept}");
        let rest = whole[kept as usize..].to_vec();
        assert_eq!(
            store.append(ID, Body::from(rest), 1 << 20).await.unwrap(),
            200_000
        );
        store
            .verify(ID, &digest)
            .await
            .map_err(|_| ())
            .unwrap()
            .store()
            .await
            .unwrap();
        assert_eq!(read_all(&*store, &digest, 0, None).await, whole, "{name}");
    }
}

#[tokio::test]
async fn uploads_stop_at_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    for (name, store) in stores(dir.path()) {
        store.start_upload(ID).await.unwrap();
        store
            .append(ID, Body::from(vec![1; 60]), 100)
            .await
            .unwrap();
        match store.append(ID, Body::from(vec![1; 41]), 100).await {
            Err(AppendError::TooLarge) => {}
            other => panic!("{name}: {other:?}"),
        }
        store.discard(ID).await.unwrap();
    }
}

#[tokio::test]
async fn a_blob_set_aside_is_unreadable_until_restored() {
    let dir = tempfile::tempdir().unwrap();
    for (name, store) in stores(dir.path()) {
        let digest = Digest::of(b"aside");
        store.start_upload(ID).await.unwrap();
        store.append(ID, Body::from("aside"), 100).await.unwrap();
        store
            .verify(ID, &digest)
            .await
            .map_err(|_| ())
            .unwrap()
            .store()
            .await
            .unwrap();
        assert!(store.set_aside(&digest).await.unwrap(), "{name}");
        assert!(
            store.read(&digest, 0, None).await.unwrap().is_none(),
            "{name}"
        );
        assert!(
            !store.set_aside(&digest).await.unwrap(),
            "{name}: already aside"
        );
        store.restore(&digest).await.unwrap();
        assert_eq!(
            read_all(&*store, &digest, 0, None).await,
            b"aside",
            "{name}"
        );
        assert!(store.set_aside(&digest).await.unwrap());
        store.purge(&digest).await.unwrap();
        store.restore(&digest).await.unwrap();
        assert_eq!(
            store.size(&digest).await.unwrap(),
            None,
            "{name}: purged for good"
        );
    }
}

#[tokio::test]
async fn an_upload_in_object_storage_holds_a_bounded_number_of_chunks() {
    let store = ObjectBlobs::new(Arc::new(object_store::memory::InMemory::new()), "");
    store.start_upload(ID).await.unwrap();
    for i in 0..1000u64 {
        assert_eq!(
            store.append(ID, Body::from("x"), 1 << 20).await.unwrap(),
            i + 1
        );
    }
    match store.append(ID, Body::from("x"), 1 << 20).await {
        Err(AppendError::Chunks) => {}
        other => panic!("{other:?}"),
    }
    let digest = Digest::of(&[b'x'; 1000]);
    let verified = store.verify(ID, &digest).await.map_err(|_| ()).unwrap();
    assert_eq!(verified.size(), 1000);
}

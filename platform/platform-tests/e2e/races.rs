//! Integrity under races (CONTRACT §7): a create under a group and the
//! delete of that group, sent at the same moment, never both succeed, so no
//! item outlives its parent. Each race runs on a fresh group, over REST (and
//! a few over gRPC); once all have run, every item left under the test's root
//! must have its parent. Runs on embedded SQLite, and on PostgreSQL when
//! `E2E_DATABASE_URL` is set.

use std::collections::HashSet;
use std::future::Future;
use std::sync::Arc;

use platform_api::platform::iam::v2::group_service_client::GroupServiceClient;
use platform_api::platform::iam::v2::{CreateGroupRequest, DeleteGroupRequest, Group};
use platform_tests::{Rest, StatusCode, TestServer};
use serde_json::json;
use tokio::sync::Barrier;

/// Races of a child group against its parent's delete, over REST.
const REST_RACES: usize = 200;
/// The same races over gRPC.
const GRPC_RACES: usize = 24;
/// Races of a repo (another table) against its group's delete, over REST.
const REPO_RACES: usize = 100;

fn engine() -> &'static str {
    if std::env::var_os("E2E_DATABASE_URL").is_some() {
        "postgres"
    } else {
        "sqlite"
    }
}

/// One race: the group deleted, and how each request ended (`Ok` with the
/// created uid, or the status it was refused with).
struct Race {
    group: String,
    created: Result<String, String>,
    deleted: Result<(), String>,
}

/// Runs both requests on tasks of their own, released together.
async fn race<C, D>(create: C, delete: D) -> (C::Output, D::Output)
where
    C: Future + Send + 'static,
    C::Output: Send + 'static,
    D: Future + Send + 'static,
    D::Output: Send + 'static,
{
    let barrier = Arc::new(Barrier::new(2));
    let create = tokio::spawn({
        let barrier = barrier.clone();
        async move {
            barrier.wait().await;
            create.await
        }
    });
    let delete = tokio::spawn(async move {
        barrier.wait().await;
        delete.await
    });
    let (create, delete) = tokio::join!(create, delete);
    (create.unwrap(), delete.unwrap())
}

fn rest_outcome(response: platform_tests::Response) -> Result<String, String> {
    if response.status == StatusCode::OK {
        Ok(response.body["uid"].as_str().unwrap_or_default().to_owned())
    } else {
        Err(format!("{} {}", response.status, response.error_status()))
    }
}

/// Races creating an item of `collection` (a REST path) under a fresh group
/// of `root` against deleting that group, `count` times.
async fn rest_races(rest: &Rest, root: &str, collection: &str, count: usize) -> Vec<Race> {
    let mut races = Vec::with_capacity(count);
    for n in 0..count {
        let group = rest
            .create(
                &format!("/iam/v2/groups/{root}"),
                json!({"name": format!("g{n}")}),
            )
            .await;
        let create = {
            let rest = rest.clone();
            let path = format!("{collection}/{group}");
            async move { rest.post(&path, json!({"name": "child"})).await }
        };
        let delete = {
            let rest = rest.clone();
            let path = format!("/iam/v2/groups/{group}");
            async move { rest.delete(&path).await }
        };
        let (created, deleted) = race(create, delete).await;
        races.push(Race {
            group,
            created: rest_outcome(created),
            deleted: rest_outcome(deleted).map(|_| ()),
        });
    }
    races
}

async fn grpc_races(server: &TestServer, root: &str, count: usize) -> Vec<Race> {
    let client = GroupServiceClient::with_interceptor(
        server.channel().await,
        platform_tests::bearer(&server.admin_token),
    );
    let mut races = Vec::with_capacity(count);
    for n in 0..count {
        let group = client
            .clone()
            .create_group(CreateGroupRequest {
                parent: root.to_owned(),
                group: Some(Group {
                    name: format!("grpc {n}"),
                    ..Default::default()
                }),
            })
            .await
            .unwrap()
            .into_inner()
            .uid;
        let create = {
            let mut client = client.clone();
            let parent = group.clone();
            async move {
                client
                    .create_group(CreateGroupRequest {
                        parent,
                        group: Some(Group {
                            name: "child".into(),
                            ..Default::default()
                        }),
                    })
                    .await
            }
        };
        let delete = {
            let mut client = client.clone();
            let uid = group.clone();
            async move {
                client
                    .delete_group(DeleteGroupRequest {
                        uid,
                        ..Default::default()
                    })
                    .await
            }
        };
        let (created, deleted) = race(create, delete).await;
        races.push(Race {
            group,
            created: created
                .map(|response| response.into_inner().uid)
                .map_err(|status| format!("{:?}", status.code())),
            deleted: deleted
                .map(|_| ())
                .map_err(|status| format!("{:?}", status.code())),
        });
    }
    races
}

/// Every uid of a collection under `root`, walking the pages.
async fn uids_under(rest: &Rest, collection: &str, root: &str) -> HashSet<String> {
    let mut uids = HashSet::new();
    let mut token = String::new();
    loop {
        let mut path = format!("{collection}?uidp.descendants_of={root}&pageSize=200");
        if !token.is_empty() {
            path.push_str(&format!("&pageToken={token}"));
        }
        let page = rest.get(&path).await;
        assert_eq!(page.status, StatusCode::OK, "{path}: {:?}", page.body);
        for item in page.body["items"].as_array().expect("a list") {
            uids.insert(item["uid"].as_str().expect("a uid").to_owned());
        }
        token = page.body["nextPageToken"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if token.is_empty() {
            return uids;
        }
    }
}

fn parent_of(uid: &str) -> &str {
    uid.rsplit_once('/').expect("a child uid").0
}

/// What is wrong with the races of one kind: both requests succeeded (the
/// contract's violation), neither did (nothing explains that), or what was
/// left stored disagrees with the answers.
fn problems(
    kind: &str,
    races: &[Race],
    items: &HashSet<String>,
    groups: &HashSet<String>,
) -> Vec<String> {
    let mut problems = Vec::new();
    let both = races
        .iter()
        .filter(|race| race.created.is_ok() && race.deleted.is_ok())
        .count();
    let created = races.iter().filter(|race| race.created.is_ok()).count();
    let deleted = races.iter().filter(|race| race.deleted.is_ok()).count();
    // Both orders should occur; shown with `--nocapture`.
    println!(
        "{} {kind}: {} races, {} created only, {} deleted only, {both} both",
        engine(),
        races.len(),
        created - both,
        deleted - both
    );
    if both > 0 {
        problems.push(format!(
            "{kind}: {both} of {} races kept the child and deleted its group",
            races.len()
        ));
    }
    for race in races {
        match (&race.created, &race.deleted) {
            (Err(created), Err(deleted)) => problems.push(format!(
                "{kind}: neither request succeeded on {} (create: {created}; delete: {deleted})",
                race.group
            )),
            (Ok(child), Err(_)) if !items.contains(child) || !groups.contains(&race.group) => {
                problems.push(format!(
                    "{kind}: the delete of {} was refused, yet {child} or its group is gone",
                    race.group
                ))
            }
            (Err(_), Ok(())) if groups.contains(&race.group) => problems.push(format!(
                "{kind}: {} was deleted, yet is still listed",
                race.group
            )),
            _ => {}
        }
    }
    problems
}

/// Items whose parent group is not stored, in one line.
fn orphans(
    kind: &str,
    items: &HashSet<String>,
    groups: &HashSet<String>,
    root: &str,
) -> Option<String> {
    let mut orphans: Vec<&str> = items
        .iter()
        .map(String::as_str)
        .filter(|uid| {
            let parent = parent_of(uid);
            parent != root && !groups.contains(parent)
        })
        .collect();
    orphans.sort();
    (!orphans.is_empty()).then(|| {
        format!(
            "{kind}: {} of {} items outlived their parent (e.g. {})",
            orphans.len(),
            items.len(),
            orphans[..orphans.len().min(3)].join(", ")
        )
    })
}

/// Fails with the first problems found, if any.
fn assert_none(found: &[String]) {
    const SHOWN: usize = 20;
    let more = match found.len().saturating_sub(SHOWN) {
        0 => String::new(),
        more => format!("\n… and {more} more"),
    };
    assert!(
        found.is_empty(),
        "{}: {} problems:\n{}{more}",
        engine(),
        found.len(),
        found[..found.len().min(SHOWN)].join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_child_group_and_the_delete_of_its_parent_never_both_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let root = rest
        .create("/iam/v2/groups/", json!({"name": "races"}))
        .await;

    let over_rest = rest_races(&rest, &root, "/iam/v2/groups", REST_RACES).await;
    let over_grpc = grpc_races(&server, &root, GRPC_RACES).await;

    let groups = uids_under(&rest, "/iam/v2/groups", &root).await;
    let mut found = problems("REST", &over_rest, &groups, &groups);
    found.extend(problems("gRPC", &over_grpc, &groups, &groups));
    found.extend(orphans("groups", &groups, &groups, &root));
    assert_none(&found);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_repo_and_the_delete_of_its_group_never_both_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let root = rest
        .create("/iam/v2/groups/", json!({"name": "repo races"}))
        .await;

    let races = rest_races(&rest, &root, "/registry/v2/repos", REPO_RACES).await;

    let groups = uids_under(&rest, "/iam/v2/groups", &root).await;
    let repos = uids_under(&rest, "/registry/v2/repos", &root).await;
    let mut found = problems("repos", &races, &repos, &groups);
    found.extend(orphans("repos", &repos, &groups, &root));
    assert_none(&found);
    server.stop().await;
}

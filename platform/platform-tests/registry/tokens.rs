//! Same tokens, same rules (CONTRACT §10): the base check's challenge, the
//! token endpoint issuing exactly the actions held, anonymous pulls of
//! public repositories, refusals that read alike for a private repository
//! and a missing one, and bad credentials refused even where none is needed.

use base64::Engine as _;
use bytes::Bytes;
use http::{Method, StatusCode};
use serde_json::Value;

use crate::common::{Oci, world};

fn basic(token: &str) -> String {
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("token:{token}"))
    )
}

/// The claims of a JWT, unverified.
fn claims(token: &str) -> Value {
    let payload = token.split('.').nth(1).unwrap();
    serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(payload)
            .unwrap(),
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_base_check_challenges_callers_without_credentials() {
    let world = world().await;
    let anonymous = world.admin.as_(None);
    let base = anonymous.get("/v2/").await;
    base.assert_error(StatusCode::UNAUTHORIZED, "UNAUTHORIZED", "no credentials");
    let address = world.server.address;
    assert_eq!(
        base.header("www-authenticate"),
        format!("Bearer realm=\"http://{address}/v2/token\",service=\"{address}\"")
    );
    assert_eq!(
        base.header("docker-distribution-api-version"),
        "registry/2.0"
    );
    assert_eq!(
        world.admin.get("/v2/").await.status,
        StatusCode::OK,
        "an API token"
    );
    let basic = world.admin.as_(Some(basic(&world.server.admin_token)));
    assert_eq!(
        basic.get("/v2/").await.status,
        StatusCode::OK,
        "an API token as Basic auth's password"
    );
    world.server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn tokens_grant_the_actions_held_and_nothing_more() {
    let world = world().await;
    let image = world
        .admin
        .push_image(&world.private, "v1", b"{}", &[b"layer"])
        .await;
    let viewer_role = world.server.builtin_role("viewer").await;
    let viewer = world
        .server
        .member(&world.org, "viewer", &viewer_role, &world.org)
        .await;
    let as_viewer = world.admin.as_(Some(basic(&viewer.token)));
    let scope = format!("repository:{}:pull,push", world.private);
    let issued = as_viewer.token(&scope).await;
    assert_eq!(issued.status, StatusCode::OK, "{:?}", issued.body);
    assert_eq!(issued.header("cache-control"), "no-store");
    let token = issued.json()["token"].as_str().unwrap().to_owned();
    assert_eq!(issued.json()["access_token"], token.as_str());
    let granted = claims(&token);
    assert_eq!(granted["sub"], viewer.identity.as_str());
    assert_eq!(
        granted["access"],
        serde_json::json!([{"type": "repository", "name": world.private, "actions": ["pull"]}])
    );

    let with_token = world.admin.as_(Some(format!("Bearer {token}")));
    assert_eq!(
        with_token
            .get(&format!("/v2/{}/manifests/v1", world.private))
            .await
            .status,
        StatusCode::OK
    );
    let push = with_token
        .send(
            Method::POST,
            &format!("/v2/{}/blobs/uploads/", world.private),
            &[],
            Bytes::new(),
        )
        .await;
    push.assert_error(StatusCode::FORBIDDEN, "DENIED", "a viewer pushing");
    assert!(
        push.header("www-authenticate").ends_with(&format!(
            ",scope=\"repository:{}:push\",error=\"insufficient_scope\"",
            world.private
        )),
        "the challenge names the scope: {}",
        push.header("www-authenticate")
    );
    let delete = with_token
        .send(
            Method::DELETE,
            &format!("/v2/{}/manifests/{}", world.private, image.digest),
            &[],
            Bytes::new(),
        )
        .await;
    delete.assert_error(StatusCode::FORBIDDEN, "DENIED", "a viewer deleting");
    // A token is for the repositories it names.
    with_token
        .get(&format!("/v2/{}/tags/list", world.public))
        .await
        .assert_error(
            StatusCode::FORBIDDEN,
            "DENIED",
            "a repository the token does not name",
        );

    // The administrator gets every action; a registry token is no API token.
    let admin_token = world
        .admin
        .as_(Some(basic(&world.server.admin_token)))
        .token(&scope)
        .await
        .json()["token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        claims(&admin_token)["access"][0]["actions"],
        serde_json::json!(["pull", "push"])
    );
    let api = world
        .server
        .rest_as(Some(&admin_token))
        .get("/iam/v2/groups?pageSize=1")
        .await;
    assert_eq!(
        api.status,
        StatusCode::UNAUTHORIZED,
        "a registry token on the API: {:?}",
        api.body
    );
    world.server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn public_repositories_are_pulled_without_credentials_and_private_ones_are_not() {
    let world = world().await;
    world
        .admin
        .push_image(&world.public, "v1", b"{}", &[b"public layer"])
        .await;
    world
        .admin
        .push_image(&world.private, "v1", b"{}", &[b"private layer"])
        .await;
    let anonymous = world.admin.as_(None);
    let public = anonymous
        .get(&format!("/v2/{}/manifests/v1", world.public))
        .await;
    assert_eq!(public.status, StatusCode::OK, "no token at all");
    let token = anonymous
        .token(&format!("repository:{}:pull", world.public))
        .await
        .json()["token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(claims(&token)["sub"], "", "anonymous");
    let with_token = anonymous.as_(Some(format!("Bearer {token}")));
    assert_eq!(
        with_token
            .get(&format!("/v2/{}/manifests/v1", world.public))
            .await
            .status,
        StatusCode::OK
    );
    anonymous
        .send(
            Method::POST,
            &format!("/v2/{}/blobs/uploads/", world.public),
            &[],
            Bytes::new(),
        )
        .await
        .assert_error(
            StatusCode::UNAUTHORIZED,
            "UNAUTHORIZED",
            "anonymous push to a public repository",
        );

    // A private repository and one that does not exist answer alike.
    let missing = format!("{}/0123456789abcdef", world.org);
    let answers: Vec<(StatusCode, String, Value)> = futures_util::future::join_all(
        [&world.private, &missing].map(|repo| refusal(&anonymous, repo)),
    )
    .await;
    assert_eq!(answers[0], answers[1], "private and missing");
    assert_eq!(answers[0].0, StatusCode::UNAUTHORIZED);
    world.server.stop().await;
}

/// How a repository refuses an anonymous pull, without a token and with
/// the one the token endpoint issues for it, its name taken out.
async fn refusal(anonymous: &Oci, repo: &str) -> (StatusCode, String, Value) {
    let direct = anonymous.get(&format!("/v2/{repo}/manifests/v1")).await;
    let token = anonymous.token(&format!("repository:{repo}:pull")).await;
    let access = claims(token.json()["token"].as_str().unwrap())["access"].clone();
    let with_token = anonymous.as_(Some(format!(
        "Bearer {}",
        token.json()["token"].as_str().unwrap()
    )));
    let after = with_token.get(&format!("/v2/{repo}/manifests/v1")).await;
    assert_eq!(
        (direct.status, after.status),
        (StatusCode::UNAUTHORIZED, StatusCode::FORBIDDEN),
        "no credentials, then a token that holds nothing"
    );
    (
        direct.status,
        [&direct, &after]
            .map(|answer| answer.header("www-authenticate").replace(repo, "<repo>"))
            .join(" / "),
        serde_json::json!([direct.json(), access, after.json()]),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_credentials_are_refused_even_on_a_public_repository() {
    let world = world().await;
    world
        .admin
        .push_image(&world.public, "v1", b"{}", &[b"layer"])
        .await;
    let path = format!("/v2/{}/manifests/v1", world.public);
    let forged = format!("{}x", world.server.admin_token.trim());
    for authorization in [
        "Bearer not-a-token".to_owned(),
        format!("Bearer {forged}"),
        basic("not-a-token"),
        basic(&forged),
        "Digest whatever".to_owned(),
    ] {
        let client = world.admin.as_(Some(authorization.clone()));
        client.get(&path).await.assert_error(
            StatusCode::UNAUTHORIZED,
            "UNAUTHORIZED",
            &authorization,
        );
        client
            .token(&format!("repository:{}:pull", world.public))
            .await
            .assert_error(
                StatusCode::UNAUTHORIZED,
                "UNAUTHORIZED",
                &format!("token endpoint, {authorization}"),
            );
    }
    world.server.stop().await;
}

/// Pulling and pushing are capabilities of their own (`repos.pull`,
/// `repos.push`), not reading or changing the repo's metadata.
#[tokio::test(flavor = "multi_thread")]
async fn pull_and_push_are_capabilities_of_their_own() {
    let world = world().await;
    world
        .admin
        .push_image(&world.private, "v1", b"{}", &[b"layer"])
        .await;
    let scope = format!("repository:{}:pull,push", world.private);
    // The actions granted (a token granting none names no repository).
    let granted = |token: String| match &claims(&token)["access"][0]["actions"] {
        Value::Null => serde_json::json!([]),
        actions => actions.clone(),
    };
    let cases: [(&str, &[&str], Value); 4] = [
        (
            "metadata reader",
            &["repos.get", "repos.update"],
            serde_json::json!([]),
        ),
        ("puller", &["repos.pull"], serde_json::json!(["pull"])),
        ("pusher", &["repos.push"], serde_json::json!(["push"])),
        (
            "both",
            &["repos.pull", "repos.push"],
            serde_json::json!(["pull", "push"]),
        ),
    ];
    for (name, capabilities, expected) in cases {
        let member = world
            .server
            .member_with(&world.org, name, capabilities)
            .await;
        let issued = world
            .admin
            .as_(Some(basic(&member.token)))
            .token(&scope)
            .await;
        assert_eq!(issued.status, StatusCode::OK, "{name}: {:?}", issued.body);
        let token = issued.json()["token"].as_str().unwrap().to_owned();
        assert_eq!(granted(token.clone()), expected, "{name}");
        let pulled = world
            .admin
            .as_(Some(format!("Bearer {}", member.token)))
            .get(&format!("/v2/{}/manifests/v1", world.private))
            .await;
        let pulls = expected.as_array().unwrap().contains(&Value::from("pull"));
        assert_eq!(
            pulled.status == StatusCode::OK,
            pulls,
            "{name}: {:?}",
            pulled.body
        );
    }
}

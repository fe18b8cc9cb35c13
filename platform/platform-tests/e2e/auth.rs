//! Authentication and authorization end to end: the token exchange with a
//! trusted issuer's keys, grants from role bindings over the group tree,
//! bad tokens on both transports, tenant isolation and public reads.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use platform_api::platform::iam::v2::GetGroupRequest;
use platform_api::platform::iam::v2::group_service_client::GroupServiceClient;
use platform_api::platform::sts::v1::ExchangeTokenRequest;
use platform_api::platform::sts::v1::token_service_client::TokenServiceClient;
use platform_tests::{Issuer, Rest, StatusCode, TestServer};
use serde_json::{Value, json};
use tonic_types::StatusExt;

const ISSUER: &str = "https://issuer.test";
const SUBJECT: &str = "repo:acme/app:ref:refs/heads/main";

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn identity_claims(audience: &str) -> Value {
    json!({"iss": ISSUER, "sub": SUBJECT, "aud": audience, "iat": now(), "exp": now() + 600})
}

/// An HS256 token signed with `secret` (the server's key, or a forged one).
fn hs256(secret: &[u8], claims: Value) -> String {
    jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &claims,
        &EncodingKey::from_secret(secret),
    )
    .unwrap()
}

fn api_claims(base: &str, sub: &str) -> Value {
    json!({"iss": base, "aud": base, "sub": sub, "iat": now(), "nbf": now(), "exp": now() + 600})
}

struct World {
    server: TestServer,
    issuer: Issuer,
    base: String,
    root: String,
    /// An assumable identity (claimMatch = ISSUER/SUBJECT) bound to `viewer` on `team`.
    identity: String,
    team: String,
    _dir: tempfile::TempDir,
}

async fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let issuer = Issuer::new("key-1");
    let server = TestServer::start_trusting(dir.path(), ISSUER, &issuer).await;
    let base = format!("http://{}", server.address);
    let admin = server.rest();

    // A root and a viewer role of its own: other tests may share the database.
    let root = admin
        .create("/iam/v2/groups/", json!({"name": "auth world"}))
        .await;
    let viewer_role = json!({"name": "viewer", "capabilities": ["groups.get", "groups.list"]});
    let viewer = admin
        .create(&format!("/iam/v2/roles/{root}"), viewer_role)
        .await;
    let team = admin
        .create(&format!("/iam/v2/groups/{root}"), json!({"name": "team"}))
        .await;
    let identity = admin
        .create(
            &format!("/iam/v2/identities/{root}"),
            json!({"name": "ci", "claimMatch": {"issuer": ISSUER, "subject": SUBJECT}}),
        )
        .await;
    admin
        .create(
            &format!("/iam/v2/roleBindings/{team}"),
            json!({"name": "ci views team", "identity": identity, "role": viewer}),
        )
        .await;
    World {
        server,
        issuer,
        base,
        root,
        identity,
        team,
        _dir: dir,
    }
}

fn exchange_path(world: &World, identity: &str) -> String {
    format!("/sts/exchange?aud={}&identity={identity}", world.base)
}

fn api_key(world: &World) -> Vec<u8> {
    std::fs::read(world.server.data_dir.join("api-token.key")).unwrap()
}

#[tokio::test]
async fn identity_token_exchange_grants_what_bindings_allow() {
    let world = world().await;
    let identity_token = world.issuer.token(identity_claims(&world.base));
    let exchanged = world
        .server
        .rest_as(Some(&identity_token))
        .get(&exchange_path(&world, &world.identity))
        .await;
    assert_eq!(exchanged.status, StatusCode::OK, "{:?}", exchanged.body);
    let token = exchanged.body["token"].as_str().unwrap().to_owned();
    let claims: Value = jsonwebtoken::dangerous::insecure_decode_claims(&token).unwrap();
    assert_eq!(claims["sub"], world.identity.as_str());
    assert_eq!(claims["aud"], world.base.as_str());
    assert_eq!(
        claims["exp"].as_u64().unwrap() - claims["iat"].as_u64().unwrap(),
        3600
    );

    let ci = world.server.rest_as(Some(&token));
    assert_eq!(
        ci.get(&format!("/iam/v2/groups/{}", world.team))
            .await
            .status,
        StatusCode::OK,
        "granted on team"
    );
    let child = world
        .server
        .rest()
        .create(
            &format!("/iam/v2/groups/{}", world.team),
            json!({"name": "sub"}),
        )
        .await;
    assert_eq!(
        ci.get(&format!("/iam/v2/groups/{child}")).await.status,
        StatusCode::OK,
        "and below it"
    );
    let above = ci.get(&format!("/iam/v2/groups/{}", world.root)).await;
    assert_eq!(
        above.status,
        StatusCode::FORBIDDEN,
        "not above it: {:?}",
        above.body
    );
    assert_eq!(above.error_status(), "PERMISSION_DENIED");
    let create = ci
        .post(
            &format!("/iam/v2/groups/{}", world.team),
            json!({"name": "x"}),
        )
        .await;
    assert_eq!(create.status, StatusCode::FORBIDDEN, "viewer cannot create");
    let listed = ci.get("/iam/v2/groups").await;
    let uids: Vec<&str> = listed.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["uid"].as_str().unwrap())
        .collect();
    assert_eq!(
        uids,
        [world.team.as_str(), child.as_str()],
        "an unfiltered list shows only what is granted"
    );
    assert_eq!(listed.body["totalCount"], 2);
    let outside = ci
        .get(&format!("/iam/v2/groups?uidp.children_of={}", world.root))
        .await;
    assert_eq!(
        outside.status,
        StatusCode::FORBIDDEN,
        "a filter outside the grants"
    );

    // Over gRPC, the same token and the same decisions.
    let channel = world.server.channel().await;
    let mut groups =
        GroupServiceClient::with_interceptor(channel.clone(), platform_tests::bearer(&token));
    groups
        .get_group(GetGroupRequest {
            uid: world.team.clone(),
        })
        .await
        .unwrap();
    let denied = groups
        .get_group(GetGroupRequest {
            uid: world.root.clone(),
        })
        .await
        .unwrap_err();
    assert_eq!(denied.code(), tonic::Code::PermissionDenied);
    let mut sts =
        TokenServiceClient::with_interceptor(channel, platform_tests::bearer(&identity_token));
    let response = sts
        .exchange_token(ExchangeTokenRequest {
            aud: world.base.clone(),
            identity: world.identity.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!response.token.is_empty());

    // Once expired, the API token is refused.
    let mut expired = api_claims(&world.base, &world.identity);
    expired["exp"] = json!(now() - 3600);
    let expired = world
        .server
        .rest_as(Some(&hs256(&api_key(&world), expired)))
        .get(&format!("/iam/v2/groups/{}", world.team))
        .await;
    expired.assert_reason(StatusCode::UNAUTHORIZED, "TOKEN_EXPIRED", "expired");
    world.server.stop().await;
}

/// What a bad-token case must fail with.
struct BadToken {
    name: &'static str,
    /// The `Authorization` header value; `None` sends none.
    authorization: Option<String>,
    /// Sent to the token exchange instead of a normal method.
    exchange: bool,
    /// The identity to exchange for (default: the assumable one).
    identity: Option<String>,
    aud: Option<String>,
    code: tonic::Code,
    reason: &'static str,
}

fn bad(
    name: &'static str,
    authorization: Option<String>,
    code: tonic::Code,
    reason: &'static str,
) -> BadToken {
    BadToken {
        name,
        authorization,
        exchange: false,
        identity: None,
        aud: None,
        code,
        reason,
    }
}

fn bearer(token: &str) -> Option<String> {
    Some(format!("Bearer {token}"))
}

#[tokio::test]
async fn bad_tokens_are_refused_precisely_on_both_transports() {
    let world = world().await;
    let base = world.base.clone();
    let key = api_key(&world);
    let sign = |edit: &dyn Fn(&mut Value)| {
        let mut claims = api_claims(&base, &world.identity);
        edit(&mut claims);
        hs256(&key, claims)
    };
    let identity_token = |edit: &dyn Fn(&mut Value)| {
        let mut claims = identity_claims(&base);
        edit(&mut claims);
        world.issuer.token(claims)
    };
    let good = sign(&|_| {});
    let alg_none = format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(r#"{"alg":"none","typ":"JWT"}"#),
        URL_SAFE_NO_PAD.encode(api_claims(&base, &world.identity).to_string())
    );
    let confused = jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &identity_claims(&base),
        &EncodingKey::from_secret(world.issuer.public_pem().as_bytes()),
    )
    .unwrap();
    let stranger = Issuer::new("key-1");
    let unauthenticated = tonic::Code::Unauthenticated;
    const REFUSED: &str = "IDENTITY_TOKEN_REFUSED";
    let exchange = |mut case: BadToken| {
        case.exchange = true;
        case
    };
    let cases = vec![
        bad("no token", None, unauthenticated, "TOKEN_REQUIRED"),
        bad(
            "expired",
            bearer(&sign(&|c| c["exp"] = json!(now() - 120))),
            unauthenticated,
            "TOKEN_EXPIRED",
        ),
        bad(
            "not yet valid",
            bearer(&sign(&|c| c["nbf"] = json!(now() + 600))),
            unauthenticated,
            "TOKEN_NOT_YET_VALID",
        ),
        bad(
            "wrong audience",
            bearer(&sign(&|c| c["aud"] = json!("https://elsewhere"))),
            unauthenticated,
            "TOKEN_WRONG_AUDIENCE",
        ),
        bad(
            "wrong issuer",
            bearer(&sign(&|c| c["iss"] = json!("https://elsewhere"))),
            unauthenticated,
            "TOKEN_WRONG_ISSUER",
        ),
        bad(
            "subject that is not an identity uid",
            bearer(&sign(&|c| c["sub"] = json!("admin"))),
            unauthenticated,
            "TOKEN_MALFORMED",
        ),
        bad(
            "foreign key",
            bearer(&hs256(&[7; 32], api_claims(&base, &world.identity))),
            unauthenticated,
            "TOKEN_BAD_SIGNATURE",
        ),
        bad(
            "tampered signature",
            bearer(&tamper_signature(&good)),
            unauthenticated,
            "TOKEN_BAD_SIGNATURE",
        ),
        bad(
            "alg none",
            bearer(&alg_none),
            unauthenticated,
            "TOKEN_MALFORMED",
        ),
        bad(
            "RS256 identity token as an API token",
            bearer(&world.issuer.token(identity_claims(&base))),
            unauthenticated,
            "TOKEN_WRONG_ALGORITHM",
        ),
        bad(
            "truncated",
            bearer(&good[..good.len() / 2]),
            unauthenticated,
            "TOKEN_MALFORMED",
        ),
        bad(
            "not a JWT",
            bearer("abc"),
            unauthenticated,
            "TOKEN_MALFORMED",
        ),
        bad(
            "missing subject",
            bearer(&sign(&|c| {
                c.as_object_mut().unwrap().remove("sub");
            })),
            unauthenticated,
            "TOKEN_MALFORMED",
        ),
        bad(
            "wrong scheme",
            Some(format!("Basic {good}")),
            unauthenticated,
            "AUTHORIZATION_WRONG_SCHEME",
        ),
        bad(
            "empty bearer",
            Some("Bearer ".to_owned()),
            unauthenticated,
            "AUTHORIZATION_MALFORMED",
        ),
        // A custom method is refused without credentials before its
        // handler runs, as every method is.
        exchange(bad(
            "exchange without a token",
            None,
            unauthenticated,
            "TOKEN_REQUIRED",
        )),
        // The exchange answers every identity token it refuses alike, so
        // that no answer tells whether an identity exists (CONTRACT §7).
        exchange(bad(
            "foreign issuer at the exchange",
            bearer(&identity_token(&|c| c["iss"] = json!("https://evil.test"))),
            unauthenticated,
            REFUSED,
        )),
        exchange(bad(
            "API token at the exchange",
            bearer(&good),
            unauthenticated,
            REFUSED,
        )),
        exchange(bad(
            "expired identity token",
            bearer(&identity_token(&|c| c["exp"] = json!(now() - 120))),
            unauthenticated,
            REFUSED,
        )),
        exchange(bad(
            "identity token for another API",
            bearer(&identity_token(&|c| c["aud"] = json!("https://elsewhere"))),
            unauthenticated,
            REFUSED,
        )),
        exchange(bad(
            "HS256 signed with the issuer's public key",
            bearer(&confused),
            unauthenticated,
            REFUSED,
        )),
        exchange(bad(
            "identity token signed by another key",
            bearer(&stranger.token(identity_claims(&base))),
            unauthenticated,
            REFUSED,
        )),
        exchange(bad(
            "subject mismatch",
            bearer(&identity_token(&|c| c["sub"] = json!("repo:evil/app"))),
            unauthenticated,
            REFUSED,
        )),
        exchange(BadToken {
            identity: Some(format!("{}/0000000000000000", world.root)),
            ..bad(
                "unknown identity",
                bearer(&identity_token(&|_| {})),
                unauthenticated,
                REFUSED,
            )
        }),
        exchange(BadToken {
            aud: Some("https://elsewhere".to_owned()),
            ..bad(
                "aud parameter of another API",
                bearer(&identity_token(&|_| {})),
                tonic::Code::InvalidArgument,
                "INVALID_ARGUMENT",
            )
        }),
    ];
    assert!(cases.len() >= 15);

    let channel = world.server.channel().await;
    for case in &cases {
        let identity = case
            .identity
            .clone()
            .unwrap_or_else(|| world.identity.clone());
        let aud = case.aud.clone().unwrap_or_else(|| base.clone());
        // REST.
        let mut rest: Rest = world.server.rest_as(None);
        rest.authorization = case.authorization.clone();
        let response = if case.exchange {
            rest.get(&format!("/sts/exchange?aud={aud}&identity={identity}"))
                .await
        } else {
            rest.get(&format!("/iam/v2/groups/{}", world.team)).await
        };
        let status = match case.code {
            tonic::Code::Unauthenticated => StatusCode::UNAUTHORIZED,
            tonic::Code::PermissionDenied => StatusCode::FORBIDDEN,
            _ => StatusCode::BAD_REQUEST,
        };
        let what = format!("{} (REST)", case.name);
        response.assert_reason(status, case.reason, &what);
        assert!(
            response.body.get("token").is_none(),
            "{}: no token",
            case.name
        );

        // gRPC.
        let status = if case.exchange {
            let request = authorized(ExchangeTokenRequest { aud, identity }, &case.authorization);
            let path = "/platform.sts.v1.TokenService/ExchangeToken";
            send::<_, platform_api::platform::sts::v1::ExchangeTokenResponse>(
                &channel, request, path,
            )
            .await
        } else {
            let request = authorized(
                GetGroupRequest {
                    uid: world.team.clone(),
                },
                &case.authorization,
            );
            let path = "/platform.iam.v2.GroupService/GetGroup";
            send::<_, platform_api::platform::iam::v2::Group>(&channel, request, path).await
        };
        assert_eq!(status.code(), case.code, "{} (gRPC): {status:?}", case.name);
        assert_eq!(
            status.get_error_details().error_info().unwrap().reason,
            case.reason,
            "{} (gRPC)",
            case.name
        );
    }
    world.server.stop().await;
}

/// The token with the first character of its signature changed.
fn tamper_signature(token: &str) -> String {
    let (signed, signature) = token.rsplit_once('.').unwrap();
    let first = if signature.starts_with('A') { 'B' } else { 'A' };
    format!("{signed}.{first}{}", &signature[1..])
}

fn authorized<T>(message: T, authorization: &Option<String>) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    if let Some(authorization) = authorization {
        request
            .metadata_mut()
            .insert("authorization", authorization.parse().unwrap());
    }
    request
}

/// Sends one call expected to fail; returns its status.
async fn send<T, R>(
    channel: &tonic::transport::Channel,
    request: tonic::Request<T>,
    path: &'static str,
) -> tonic::Status
where
    T: prost::Message + Send + Sync + 'static,
    R: prost::Message + Default + std::fmt::Debug + Send + Sync + 'static,
{
    let mut grpc = tonic::client::Grpc::new(channel.clone());
    grpc.ready().await.unwrap();
    let codec = tonic_prost::ProstCodec::<T, R>::default();
    grpc.unary(request, path.parse().unwrap(), codec)
        .await
        .unwrap_err()
}

/// A tenant: a root organization with its own owner identity.
struct Tenant {
    root: String,
    token: String,
    repo: String,
}

async fn tenant(server: &TestServer, name: &str) -> Tenant {
    let admin = server.rest();
    let root = admin
        .create("/iam/v2/groups/", json!({ "name": name }))
        .await;
    let capabilities: Vec<String> = ["groups", "repos", "roles", "roleBindings"]
        .iter()
        .flat_map(|c| ["create", "get", "list", "update", "delete"].map(|op| format!("{c}.{op}")))
        .collect();
    let owner = server.member_with(&root, name, &capabilities).await;
    let repo = owner
        .rest
        .create(
            &format!("/registry/v2/repos/{root}"),
            json!({"name": "private"}),
        )
        .await;
    Tenant {
        root,
        token: owner.token,
        repo,
    }
}

#[tokio::test]
async fn tenants_cannot_see_or_touch_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let one = tenant(&server, "one").await;
    let two = tenant(&server, "two").await;
    let team_two = server
        .rest_as(Some(&two.token))
        .create(
            &format!("/iam/v2/groups/{}", two.root),
            json!({"name": "t"}),
        )
        .await;
    let as_one = server.rest_as(Some(&one.token));

    // One's own tree works.
    assert_eq!(
        as_one
            .get(&format!("/iam/v2/groups/{}", one.root))
            .await
            .status,
        StatusCode::OK
    );
    assert_eq!(
        as_one
            .get(&format!("/registry/v2/repos/{}", one.repo))
            .await
            .status,
        StatusCode::OK
    );

    // Repos are public-readable: listing two's repos shows its public ones
    // (none), not its private repo.
    let listed = as_one
        .get(&format!(
            "/registry/v2/repos?uidp.descendants_of={}",
            two.root
        ))
        .await;
    assert_eq!(listed.status, StatusCode::OK, "{:?}", listed.body);
    assert_eq!(listed.body["items"], json!([]));

    // Every route into two's tree is 403, whether the uid exists or not.
    let ghost = format!("{}/0123456789abcdef", two.root);
    let forbidden = [
        as_one.get(&format!("/iam/v2/groups/{}", two.root)).await,
        as_one.get(&format!("/iam/v2/groups/{team_two}")).await,
        as_one.get(&format!("/iam/v2/groups/{ghost}")).await,
        as_one
            .get(&format!("/registry/v2/repos/{}", two.repo))
            .await,
        as_one.get(&format!("/registry/v2/repos/{ghost}")).await,
        as_one
            .get(&format!("/iam/v2/groups?uidp.children_of={}", two.root))
            .await,
        as_one
            .patch(
                &format!("/iam/v2/groups/{team_two}?updateMask=description"),
                json!({"description": "x"}),
            )
            .await,
        as_one
            .patch(
                &format!("/iam/v2/groups/{ghost}?updateMask=description"),
                json!({"description": "x"}),
            )
            .await,
        as_one
            .delete(&format!("/registry/v2/repos/{}", two.repo))
            .await,
        as_one.delete(&format!("/registry/v2/repos/{ghost}")).await,
        as_one
            .post(
                &format!("/iam/v2/groups/{}", two.root),
                json!({"name": "intruder"}),
            )
            .await,
        as_one
            .post(
                &format!("/iam/v2/groups/{ghost}"),
                json!({"name": "intruder"}),
            )
            .await,
        as_one
            .post("/iam/v2/groups/", json!({"name": "a third root"}))
            .await,
    ];
    for (index, response) in forbidden.iter().enumerate() {
        let what = format!("route {index}");
        response.assert_reason(StatusCode::FORBIDDEN, "PERMISSION_DENIED", &what);
        assert!(
            response.detail("ResourceInfo").is_none(),
            "route {index}: no hint of existence"
        );
    }

    // Unfiltered lists show only one's own tree.
    let groups = as_one.get("/iam/v2/groups").await.body;
    let uids: Vec<&str> = groups["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["uid"].as_str().unwrap())
        .collect();
    assert_eq!(uids, [one.root.as_str()]);
    // Repos: one's own, and public repos of anyone (other tests may share the
    // database), never two's private repo.
    let mut token = String::new();
    let mut own_seen = false;
    loop {
        let page = as_one
            .get(&format!(
                "/registry/v2/repos?pageSize=200&pageToken={token}"
            ))
            .await
            .body;
        for repo in page["items"].as_array().unwrap() {
            assert!(
                repo["uid"].as_str().unwrap().starts_with(&one.root) || repo["public"] == true,
                "{repo}"
            );
            own_seen |= repo["uid"] == one.repo.as_str();
        }
        token = page["nextPageToken"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if token.is_empty() {
            break;
        }
    }
    assert!(own_seen, "one's own repo is listed");

    // Two's data is untouched, and gRPC decides the same.
    let two_view = server
        .rest_as(Some(&two.token))
        .get(&format!("/iam/v2/groups/{team_two}"))
        .await;
    assert_eq!(two_view.body["description"], "");
    let mut grpc = GroupServiceClient::with_interceptor(
        server.channel().await,
        platform_tests::bearer(&one.token),
    );
    for uid in [&two.root, &ghost] {
        let status = grpc
            .get_group(GetGroupRequest { uid: uid.clone() })
            .await
            .unwrap_err();
        assert_eq!(status.code(), tonic::Code::PermissionDenied, "{uid}");
    }
    server.stop().await;
}

#[tokio::test]
async fn public_repos_and_documents_read_without_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let admin = server.rest();
    // A root of its own: other tests may share the database.
    let root = admin
        .create("/iam/v2/groups/", json!({"name": "public reads"}))
        .await;
    let public = admin
        .create(
            &format!("/registry/v2/repos/{root}"),
            json!({"name": "open", "public": true}),
        )
        .await;
    let private = admin
        .create(
            &format!("/registry/v2/repos/{root}"),
            json!({"name": "closed"}),
        )
        .await;
    let document = admin
        .create(
            &format!("/advisory/v2/documents/{root}"),
            // Published, so public (drafts: `published.rs`).
            json!({"name": "ADV-1", "title": "t", "published": "2020-01-02T03:04:05Z"}),
        )
        .await;
    let anonymous = server.rest_as(None);

    assert_eq!(
        anonymous
            .get(&format!("/registry/v2/repos/{public}"))
            .await
            .status,
        StatusCode::OK
    );
    for uid in [private.clone(), format!("{root}/0123456789abcdef")] {
        let response = anonymous.get(&format!("/registry/v2/repos/{uid}")).await;
        let what = format!("{uid}: private and missing look alike");
        response.assert_reason(StatusCode::UNAUTHORIZED, "TOKEN_REQUIRED", &what);
    }
    let listed = anonymous
        .get(&format!("/registry/v2/repos?uidp.children_of={root}"))
        .await;
    assert_eq!(listed.status, StatusCode::OK, "{:?}", listed.body);
    let uids: Vec<&str> = listed.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uid"].as_str().unwrap())
        .collect();
    assert_eq!(
        uids,
        [public.as_str()],
        "anonymous lists show public repos only"
    );
    assert_eq!(
        anonymous
            .patch(
                &format!("/registry/v2/repos/{public}"),
                json!({"readme": "x"})
            )
            .await
            .status,
        StatusCode::UNAUTHORIZED
    );

    // Presenting a token still validates it, even on a public read.
    let mut bad = server.rest_as(None);
    bad.authorization = Some("Bearer not-a-token".into());
    assert_eq!(
        bad.get(&format!("/registry/v2/repos/{public}"))
            .await
            .status,
        StatusCode::UNAUTHORIZED
    );

    assert_eq!(
        anonymous
            .get(&format!("/advisory/v2/documents/{document}"))
            .await
            .status,
        StatusCode::OK
    );
    assert_eq!(
        anonymous.get("/advisory/v2/documents").await.status,
        StatusCode::OK
    );
    assert_eq!(
        anonymous
            .post(
                &format!("/advisory/v2/documents/{root}"),
                json!({"name": "x"})
            )
            .await
            .status,
        StatusCode::UNAUTHORIZED
    );
    server.stop().await;
}

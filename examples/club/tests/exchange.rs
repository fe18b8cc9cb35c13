//! The declared token exchange, served over a real socket by the generated
//! `Services::token_exchange` on memory and on SQLite, and called with the
//! generated clients over REST and gRPC: an identity token of a trusted
//! issuer becomes an API token of the member whose `login` it matches, and
//! every refusal reads the same.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use club::club::v1::client::{MemberService, SignIn};
use club::club::v1::{CreateMemberRequest, ExchangeTokenRequest, GetMemberRequest, Login, Member};
use protoapi_runtime::Code;
use protoapi_runtime::auth::{
    ApiTokens, Authentication, Authorizer, TokenExchange, TrustedIssuers, authenticate,
};
use protoapi_runtime::client::{Connection, StaticToken};
use protoapi_runtime::paging::PageTokens;
use protoapi_runtime::standard::ApiContext;
use protoapi_runtime::{Error, sql};
use protoapi_testing::issuer::Issuer;
use serde_json::json;

/// The API's base URL: the audience identity tokens are for.
const API: &str = "https://club.example";
const ISSUER: &str = "https://login.example";
/// The administrator's uid.
const ADMIN: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

/// The API served on a free port with its exchange trusting `issuer`.
struct Club {
    base: String,
    tokens: ApiTokens,
    /// Keeps the JWKS file while the server reads it.
    _jwks: tempfile::TempDir,
}

async fn serve<S: club::Stores>(store: S, issuer: &Issuer) -> Club {
    let jwks = tempfile::tempdir().unwrap();
    let file = jwks.path().join("jwks.json");
    std::fs::write(&file, issuer.jwks.to_string()).unwrap();
    let issuers = TrustedIssuers::load(&[(ISSUER.to_owned(), file)]).unwrap();
    let tokens = ApiTokens::new(&[7; 32], API);
    let store = Arc::new(store);
    let authentication = Authentication::for_api(&club::API, tokens.clone(), ADMIN);
    let router = club::Services::new(ApiContext::new(
        PageTokens::random(),
        Authorizer::allow_all(),
    ))
    .store(Arc::clone(&store))
    .token_exchange(store, TokenExchange::new(tokens.clone(), issuers))
    .layer(axum::middleware::from_fn_with_state(
        Arc::new(authentication),
        authenticate,
    ))
    .build()
    .unwrap();
    Club {
        base: protoapi_runtime::testing::served::on_free_port(router).await,
        tokens,
        _jwks: jwks,
    }
}

fn connect(club: &Club, grpc: bool, bearer: &str) -> Connection {
    let connection = match grpc {
        true => Connection::grpc(&club.base),
        false => Connection::rest(&club.base),
    };
    connection.unwrap().with_tokens(StaticToken::new(bearer))
}

fn identity_token(issuer: &Issuer, subject: &str) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    issuer.token(json!({
        "iss": ISSUER,
        "sub": subject,
        "aud": API,
        "iat": now,
        "exp": now + 300,
    }))
}

async fn exchange(
    club: &Club,
    grpc: bool,
    bearer: &str,
    member: &str,
    audience: &str,
) -> Result<String, Error> {
    let request = ExchangeTokenRequest {
        audience: audience.to_owned(),
        member: member.to_owned(),
    };
    let answer = SignIn::new(connect(club, grpc, bearer))
        .exchange_token(request)
        .await?;
    Ok(answer.api_token)
}

/// Enrols a member whose login is `subject` at the issuer; their uid.
async fn enrol(club: &Club, display_name: &str, subject: &str) -> String {
    let member = Member {
        display_name: display_name.to_owned(),
        login: Some(Login {
            issuer: ISSUER.to_owned(),
            subject: subject.to_owned(),
        }),
        ..Default::default()
    };
    let request = CreateMemberRequest {
        member: Some(member),
        parent: String::new(),
    };
    let admin = club.tokens.issue(ADMIN);
    let created = MemberService::new(connect(club, false, &admin))
        .create(request)
        .await
        .unwrap();
    created.uid
}

/// A refusal that tells nothing of why: the one answer of the runtime's exchange.
fn assert_refused(answer: Result<String, Error>, case: &str) {
    let error = answer.expect_err(case);
    assert_eq!(error.code(), Code::Unauthenticated, "{case}: {error:?}");
    assert_eq!(
        error.reason(),
        "IDENTITY_TOKEN_REFUSED",
        "{case}: {error:?}"
    );
}

async fn exchanges_as_declared(club: &Club, issuer: &Issuer) {
    let alice_uid = enrol(club, "alice", "alice@login").await;
    let bob_uid = enrol(club, "bob", "bob@login").await;
    let alice = identity_token(issuer, "alice@login");
    let nobody = "b".repeat(40);
    for grpc in [false, true] {
        let token = exchange(club, grpc, &alice, &alice_uid, API).await.unwrap();
        assert_eq!(club.tokens.verify(&token).unwrap().sub, alice_uid);
        // The API token is the member's: the API accepts it.
        let read = MemberService::new(connect(club, grpc, &token))
            .get(GetMemberRequest {
                uid: alice_uid.clone(),
            })
            .await
            .unwrap();
        assert_eq!(read.display_name, "alice");

        let unknown = exchange(club, grpc, &alice, &nobody, API).await;
        assert_refused(unknown, "an unknown member");
        let other = exchange(club, grpc, &alice, &bob_uid, API).await;
        assert_refused(other, "another member's login");
        let stranger = identity_token(&Issuer::new("key-1"), "alice@login");
        let forged = exchange(club, grpc, &stranger, &alice_uid, API).await;
        assert_refused(forged, "a key the issuer does not publish");

        let elsewhere = exchange(club, grpc, &alice, &alice_uid, "https://other.example").await;
        let error = elsewhere.expect_err("another audience");
        assert_eq!(error.code(), Code::InvalidArgument);
        assert_eq!(error.field_violations()[0].field, "audience");
        let malformed = exchange(club, grpc, &alice, "not a uid", API).await;
        let error = malformed.expect_err("not a uid");
        assert_eq!(error.code(), Code::InvalidArgument);
        assert_eq!(error.field_violations()[0].field, "member");
        let anonymous = SignIn::new(match grpc {
            true => Connection::grpc(&club.base).unwrap(),
            false => Connection::rest(&club.base).unwrap(),
        })
        .exchange_token(ExchangeTokenRequest::default())
        .await;
        assert_eq!(anonymous.unwrap_err().code(), Code::Unauthenticated);
    }
}

async fn deleted_members_are_not_exchanged_for(club: &Club, issuer: &Issuer) {
    let carol_uid = enrol(club, "carol", "carol@login").await;
    let carol = identity_token(issuer, "carol@login");
    exchange(club, false, &carol, &carol_uid, API)
        .await
        .unwrap();
    let admin = club.tokens.issue(ADMIN);
    MemberService::new(connect(club, false, &admin))
        .delete(club::club::v1::DeleteMemberRequest {
            uid: carol_uid.clone(),
        })
        .await
        .unwrap();
    let answer = exchange(club, false, &carol, &carol_uid, API).await;
    assert_refused(answer, "a deleted member");
}

#[tokio::test]
async fn the_declared_exchange_serves_in_memory() {
    let issuer = Issuer::new("key-1");
    let club = serve(club::MemoryStore::default(), &issuer).await;
    exchanges_as_declared(&club, &issuer).await;
    deleted_members_are_not_exchanged_for(&club, &issuer).await;
}

#[tokio::test]
async fn the_declared_exchange_serves_on_sqlite() {
    let issuer = Issuer::new("key-1");
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("club.db").display());
    let options = sql::SqlOptions::new(club::tables());
    let store = club::SqlStore::open(&url, options).await.unwrap();
    let club = serve(store, &issuer).await;
    exchanges_as_declared(&club, &issuer).await;
    deleted_members_are_not_exchanged_for(&club, &issuer).await;
}

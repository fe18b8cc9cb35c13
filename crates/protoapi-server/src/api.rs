//! What a generated crate describes of its API, which the router, the
//! access log and authentication read.

/// What a generated crate describes of its API (its `API` constant).
#[derive(Clone, Copy, Debug)]
pub struct Api {
    /// The encoded descriptors of every proto (for reflection).
    pub descriptor_set: &'static [u8],
    /// The OpenAPI document served at `/openapi.json`.
    pub openapi_json: &'static str,
    /// The ErrorInfo domain of errors outside every service.
    pub error_domain: &'static str,
    /// Every service of the API, each of which must be served.
    pub services: &'static [ServiceSlot],
    /// The method trading identity tokens for the API's own, if the API
    /// declares one (`Authentication::for_api` reads it).
    pub token_exchange: Option<ExchangeSlot>,
    /// Whether any method states who may call it; without, every caller
    /// the server authenticates may call every method, and building the
    /// router logs a warning that says so.
    pub access_rules: bool,
}

/// The token exchange an API declares: the route whose bearer is an
/// identity token to exchange rather than an API token, the ErrorInfo
/// domain of its service, which authentication's refusals name, and the
/// JSON names of the fields it reads and answers.
#[derive(Clone, Copy, Debug)]
pub struct ExchangeSlot {
    pub route: protoapi_client::client::Route,
    pub domain: &'static str,
    /// The request field naming the API the token is for.
    pub audience_field: &'static str,
    /// The request field naming the subject.
    pub subject_field: &'static str,
    /// The response field answering the API token.
    pub token_field: &'static str,
}

impl ExchangeSlot {
    /// How the console calls the exchange for the API at `base_url`
    /// (`None` for a route without an HTTP rule, which the generator
    /// refuses for exchanges).
    pub fn console(&self, base_url: &str) -> Option<protoapi_console::oidc::Exchange> {
        let rule = self.route.http?;
        Some(protoapi_console::oidc::Exchange {
            method: rule.verb.parse().unwrap_or(http::Method::POST),
            // The generator declares exchanges whose rule binds no field.
            path: rule.template.expand(|_| String::new()),
            in_body: rule.body == Some("*"),
            audience: (self.audience_field.to_owned(), base_url.to_owned()),
            subject_field: self.subject_field.to_owned(),
            token_field: self.token_field.to_owned(),
        })
    }
}

/// A service of an API and how its builder serves it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ServiceSlot {
    /// The full proto name, e.g. `library.v1.ShelfService`.
    pub name: &'static str,
    /// The builder method that serves it, e.g. `store` or `loan_service`.
    pub served_by: &'static str,
}

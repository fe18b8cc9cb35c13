//! The token exchange an API declares (annotation `token_exchange` of the
//! collection whose items the API tokens are for): a custom method, alone in
//! its service, that trades an identity token from a trusted OIDC issuer for
//! an API token of the item whose claim names the token's issuer and subject.

/// A declared token exchange, resolved against the descriptors
/// (`annotate::exchange`).
#[derive(Clone, Debug)]
pub struct TokenExchange {
    /// Full name of its service, which serves nothing else.
    pub service: String,
    /// The method, e.g. `ExchangeToken`.
    pub method: String,
    /// Full name of the resource whose items are the subjects.
    pub resource: String,
    /// The request's field holding the subject's key (proto name).
    pub subject_field: String,
    /// The request's field naming the API the token is for (proto name).
    pub audience_field: String,
    /// The resource's message field holding `issuer` and `subject` (proto
    /// name).
    pub claim_field: String,
    /// The response's field answering the API token (proto name).
    pub token_field: String,
    /// Whether the response has fields besides the token (left default).
    pub response_has_more: bool,
}

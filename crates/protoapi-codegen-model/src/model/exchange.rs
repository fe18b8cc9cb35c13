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
    /// The request's field holding the subject's key.
    pub subject_field: FieldName,
    /// The request's field naming the API the token is for.
    pub audience_field: FieldName,
    /// The resource's message field holding `issuer` and `subject` (proto
    /// name).
    pub claim_field: String,
    /// The response's field answering the API token.
    pub token_field: FieldName,
    /// Whether the response has fields besides the token (left default).
    pub response_has_more: bool,
}

/// A field's proto and JSON names.
#[derive(Clone, Debug)]
pub struct FieldName {
    pub proto: String,
    pub json: String,
}

//! `token_exchange`: the method trading identity tokens for API tokens of a
//! collection's items, checked against the descriptors (one per API; items
//! keyed by UIDPs, as API tokens name callers; a custom method alone in its
//! service; string fields where the exchange reads and writes them; a claim
//! message with `issuer` and `subject`).

use prost_reflect::{DescriptorPool, FieldDescriptor, Kind, MessageDescriptor};
use toml::Spanned;

use crate::annotations::{Annotations, ExchangeRule, SourceFile};
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::model::{Api, FieldName, Method, Service, Standard, TokenExchange};

/// The claim message's fields an identity token's `iss` and `sub` must equal.
const CLAIM_FIELDS: [&str; 2] = ["issuer", "subject"];

impl Api {
    /// Resolves the one `token_exchange` the annotations may declare.
    pub(super) fn resolve_token_exchange(
        &mut self,
        pool: &DescriptorPool,
        annotations: &Annotations,
        diagnostics: &mut Diagnostics,
    ) {
        let declared: Vec<_> = annotations
            .collections
            .iter()
            .filter_map(|(id, collection)| {
                let rule = collection.token_exchange.as_ref()?;
                Some((id, rule, &collection.source))
            })
            .collect();
        let mut resolved = Vec::new();
        for &(id, rule, source) in &declared {
            let Some(resource) = self.resource_by_collection(id) else {
                continue; // Reported as an unknown collection.
            };
            if resource.names.is_some() {
                diagnostics.push(Diagnostic::new(
                    source.at(rule),
                    format!(
                        "`{id}` is keyed by resource names, but an API token names its subject by \
                         UIDP (the caller's `uid`): a token exchange issues tokens for a collection \
                         keyed by `uid`"
                    ),
                ));
                continue;
            }
            let checker = Checker {
                pool,
                source,
                diagnostics,
            };
            resolved.extend(checker.resolve(self, &resource.full_name, rule));
        }
        if let [(first, ..), rest @ ..] = &declared[..] {
            for (_, again, source) in rest {
                diagnostics.push(Diagnostic::new(
                    source.at(again),
                    format!(
                        "an API declares one token exchange, and `{first}` declares it already"
                    ),
                ));
            }
        }
        self.token_exchange = resolved.into_iter().next();
    }
}

/// Where the checks report.
struct Checker<'a> {
    pool: &'a DescriptorPool,
    source: &'a SourceFile,
    diagnostics: &'a mut Diagnostics,
}

impl Checker<'_> {
    fn resolve(
        mut self,
        api: &Api,
        resource: &str,
        rule: &Spanned<ExchangeRule>,
    ) -> Option<TokenExchange> {
        let rule = rule.get_ref();
        let (service, method) = self.find(api, &rule.method)?;
        let servable = self.servable(service, method, &rule.method);
        let input = self.message(&method.input_type);
        let output = self.message(&method.output_type);
        let subject = self.string_field(&input, &rule.subject, "request");
        let audience = self.string_field(&input, &rule.audience, "request");
        let token = self.string_field(&output, &rule.token, "response");
        let claim = self.claim(&self.message(resource), &rule.claim);
        Some(TokenExchange {
            service: service.full_name.clone(),
            method: method.name.clone(),
            resource: resource.to_owned(),
            subject_field: subject?,
            audience_field: audience?,
            claim_field: claim?,
            response_has_more: output.fields().len() > 1,
            token_field: token?,
        })
        .filter(|_| servable)
    }

    fn message(&self, full_name: &str) -> MessageDescriptor {
        self.pool
            .get_message_by_name(full_name)
            .expect("the model's messages come from the pool")
    }

    /// The method `name` names.
    fn find<'a>(
        &mut self,
        api: &'a Api,
        name: &Spanned<String>,
    ) -> Option<(&'a Service, &'a Method)> {
        let found = name
            .get_ref()
            .rsplit_once('.')
            .and_then(|(service, method)| {
                let service = api
                    .packages
                    .iter()
                    .flat_map(|p| &p.services)
                    .find(|s| s.full_name == service)?;
                Some((service, service.methods.iter().find(|m| m.name == method)?))
            });
        if found.is_none() {
            self.report(
                name,
                format!(
                    "no method `{}`: name it with its service's full name, `package.Service.Method`",
                    name.get_ref()
                ),
            );
        }
        found
    }

    /// Whether `method` can be the exchange, reporting why not.
    fn servable(&mut self, service: &Service, method: &Method, name: &Spanned<String>) -> bool {
        let refusal = if let Some(other) = service.methods.iter().find(|m| m.name != method.name) {
            format!(
                "`{}` serves only the token exchange, but also declares `{}`: move it to a service of its own",
                service.full_name, other.name
            )
        } else if !matches!(method.standard, Standard::Custom) {
            format!("`{}` is a standard method, not an exchange", method.name)
        } else if !method.media.is_plain() {
            format!(
                "`{}` streams or answers raw bytes: an exchange answers one message",
                method.name
            )
        } else if method.http.is_none() {
            format!(
                "`{}` has no HTTP rule: the console and REST clients exchange over REST",
                method.name
            )
        } else if method.bindings().any(|http| {
            !http.template.variables.is_empty()
                || http.body.as_deref().is_some_and(|body| body != "*")
        }) {
            format!(
                "`{}`'s HTTP rule must send the request in its query or whole body (`body: \"*\"`), \
                 binding no path variable, so that every client calls it alike",
                method.name
            )
        } else if method.bindings().count() > 1 {
            format!(
                "`{}` has additional bindings, but authentication knows an exchange by one route",
                method.name
            )
        } else if method.anonymous {
            format!(
                "`{}` is anonymous, but an exchange takes the identity token as the bearer",
                method.name
            )
        } else {
            return true;
        };
        self.report(name, refusal);
        false
    }

    /// The names of `message`'s plain string field `name` names.
    fn string_field(
        &mut self,
        message: &MessageDescriptor,
        name: &Spanned<String>,
        what: &str,
    ) -> Option<FieldName> {
        let field = self.field(message, name, what)?;
        if is_plain_string(&field) {
            return Some(FieldName {
                proto: field.name().to_owned(),
                json: field.json_name().to_owned(),
            });
        }
        self.report(
            name,
            format!(
                "`{}.{}` must be a `string` field (not repeated, optional or in a oneof)",
                message.name(),
                field.name()
            ),
        );
        None
    }

    /// The claim field: a singular message with plain string `issuer` and
    /// `subject`.
    fn claim(&mut self, resource: &MessageDescriptor, name: &Spanned<String>) -> Option<String> {
        let field = self.field(resource, name, "resource")?;
        let claim = match field.kind() {
            Kind::Message(claim) if !field.is_list() && !field.is_map() && !in_oneof(&field) => {
                claim
            }
            _ => {
                self.report(
                    name,
                    format!(
                        "`{}.{}` must be a message field holding `issuer` and `subject` strings",
                        resource.name(),
                        field.name()
                    ),
                );
                return None;
            }
        };
        let missing: Vec<&str> = CLAIM_FIELDS
            .into_iter()
            .filter(|f| {
                !claim
                    .get_field_by_name(f)
                    .is_some_and(|f| is_plain_string(&f))
            })
            .collect();
        if !missing.is_empty() {
            self.report(
                name,
                format!(
                    "`{}` must have `string` fields `issuer` and `subject` (an identity token's `iss` and `sub`); it lacks `{}`",
                    claim.full_name(),
                    missing.join("`, `")
                ),
            );
            return None;
        }
        Some(field.name().to_owned())
    }

    fn field(
        &mut self,
        message: &MessageDescriptor,
        name: &Spanned<String>,
        what: &str,
    ) -> Option<FieldDescriptor> {
        let field = message
            .get_field_by_name(name.get_ref())
            .or_else(|| message.get_field_by_json_name(name.get_ref()));
        if field.is_none() {
            let fields: Vec<String> = message.fields().map(|f| f.name().to_owned()).collect();
            self.report(
                name,
                format!(
                    "the {what} `{}` has no field `{}` (fields: {})",
                    message.full_name(),
                    name.get_ref(),
                    fields.join(", ")
                ),
            );
        }
        field
    }

    fn report(&mut self, at: &Spanned<String>, message: String) {
        self.diagnostics
            .push(Diagnostic::new(self.source.at(at), message));
    }
}

fn in_oneof(field: &FieldDescriptor) -> bool {
    field.containing_oneof().is_some()
}

fn is_plain_string(field: &FieldDescriptor) -> bool {
    field.kind() == Kind::String && !field.is_list() && !field.is_map() && !in_oneof(field)
}

//! The plugin protocol's `Provider` service over an API's [`Schema`]:
//! a resource type and a data source per collection, and a data source
//! per list.

use std::collections::HashMap;
use std::sync::RwLock;

use tonic::{Request, Response, Status};

use protoapi_client::client::Connection;
use protoapi_client::schema::Schema;

use crate::proto::provider_server::Provider as Service;
use crate::proto::*;
use crate::resource::{Calls, Outcome, plan};
use crate::schema::{ID, PARENT, ResourceType, resource_types};
use crate::value::Value;
use crate::{config, describe, diagnostics, list, state, validate};

/// A provider of every collection of one API.
pub struct Provider {
    prefix: String,
    credentials: config::Credentials,
    types: Vec<ResourceType>,
    connection: RwLock<Option<Connection>>,
}

impl Provider {
    /// The provider of `schema`'s collections, named `{prefix}_{singular}`,
    /// calling with the token sources `credentials` gives.
    pub fn new(schema: &'static Schema, prefix: &str, credentials: config::Credentials) -> Self {
        Provider {
            prefix: prefix.to_owned(),
            credentials,
            types: resource_types(schema, prefix),
            connection: RwLock::new(None),
        }
    }

    /// The prefix of its resource types' names (`library`).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The resource types it serves.
    pub fn types(&self) -> &[ResourceType] {
        &self.types
    }

    /// The type Terraform manages items of by `name`.
    fn resource(&self, name: &str) -> Result<&ResourceType, Status> {
        self.types
            .iter()
            .find(|t| t.name == name && t.managed)
            .ok_or_else(|| Status::not_found(format!("no resource type `{name}`")))
    }

    /// The type read by the data source `name`, and whether it lists.
    fn data_source(&self, name: &str) -> Result<(&ResourceType, bool), Status> {
        self.types
            .iter()
            .find_map(|t| match list::name(t, &self.prefix) {
                Some(listed) if listed == name => Some((t, true)),
                _ => (t.name == name).then_some((t, false)),
            })
            .ok_or_else(|| Status::not_found(format!("no data source `{name}`")))
    }

    fn connection(&self) -> Outcome<Connection> {
        self.connection
            .read()
            .expect("the connection lock is not poisoned")
            .clone()
            .ok_or_else(|| {
                vec![diagnostics::error(
                    "The provider is not configured",
                    "Terraform called the provider before configuring it.",
                    &[],
                )]
            })
    }

    async fn calls<T>(
        &self,
        resource: &ResourceType,
        run: impl AsyncFnOnce(Calls<'_>) -> Outcome<T>,
    ) -> Result<Outcome<T>, Status> {
        Ok(match self.connection() {
            Ok(connection) => {
                run(Calls {
                    resource,
                    connection: &connection,
                })
                .await
            }
            Err(diagnostics) => Err(diagnostics),
        })
    }
}

fn decode(value: Option<&DynamicValue>) -> Result<Value, Status> {
    match value {
        Some(value) if !value.msgpack.is_empty() => {
            Value::decode(&value.msgpack).map_err(Status::invalid_argument)
        }
        Some(value) if !value.json.is_empty() => {
            let json: serde_json::Value = serde_json::from_slice(&value.json)
                .map_err(|e| Status::invalid_argument(e.to_string()))?;
            Ok(crate::value::from_json(&json))
        }
        _ => Ok(Value::Null),
    }
}

fn encode(value: &Value) -> Option<DynamicValue> {
    Some(DynamicValue {
        msgpack: value.encode(),
        json: Vec::new(),
    })
}

/// The value and diagnostics of an outcome.
fn split(outcome: Outcome<Value>, otherwise: Value) -> (Value, Vec<Diagnostic>) {
    match outcome {
        Ok(value) => (value, Vec::new()),
        Err(diagnostics) => (otherwise, diagnostics),
    }
}

#[tonic::async_trait]
impl Service for Provider {
    async fn get_provider_schema(
        &self,
        _: Request<get_provider_schema::Request>,
    ) -> Result<Response<get_provider_schema::Response>, Status> {
        let resources: HashMap<String, crate::proto::Schema> = self
            .types
            .iter()
            .filter(|t| t.managed)
            .map(|t| (t.name.clone(), describe::schema(&t.attrs, &t.description)))
            .collect();
        let mut data_sources: HashMap<String, crate::proto::Schema> = self
            .types
            .iter()
            .map(|t| {
                (
                    t.name.clone(),
                    describe::schema(&t.data_source_attrs(), &t.description),
                )
            })
            .collect();
        for resource in &self.types {
            if let Some(name) = list::name(resource, &self.prefix) {
                let description =
                    format!("Lists {}: {}", resource.collection.id, resource.description);
                data_sources.insert(name, describe::schema(&list::attrs(resource), &description));
            }
        }
        Ok(Response::new(get_provider_schema::Response {
            provider: Some(describe::schema(&config::attrs(&self.prefix), "")),
            resource_schemas: resources,
            data_source_schemas: data_sources,
            diagnostics: Vec::new(),
            provider_meta: None,
            server_capabilities: Some(ServerCapabilities {
                plan_destroy: false,
                get_provider_schema_optional: false,
            }),
        }))
    }

    async fn validate_provider_config(
        &self,
        _: Request<validate_provider_config::Request>,
    ) -> Result<Response<validate_provider_config::Response>, Status> {
        Ok(Response::new(validate_provider_config::Response::default()))
    }

    async fn validate_resource_config(
        &self,
        request: Request<validate_resource_config::Request>,
    ) -> Result<Response<validate_resource_config::Response>, Status> {
        let request = request.into_inner();
        let resource = self.resource(&request.type_name)?;
        let config = decode(request.config.as_ref())?;
        Ok(Response::new(validate_resource_config::Response {
            diagnostics: validate::config(resource, &config),
        }))
    }

    async fn validate_data_resource_config(
        &self,
        _: Request<validate_data_resource_config::Request>,
    ) -> Result<Response<validate_data_resource_config::Response>, Status> {
        Ok(Response::new(
            validate_data_resource_config::Response::default(),
        ))
    }

    async fn upgrade_resource_state(
        &self,
        request: Request<upgrade_resource_state::Request>,
    ) -> Result<Response<upgrade_resource_state::Response>, Status> {
        let request = request.into_inner();
        let resource = self.resource(&request.type_name)?;
        let json = request.raw_state.map(|raw| raw.json).unwrap_or_default();
        let state = match json.is_empty() {
            true => Value::Null,
            false => crate::value::from_json(
                &serde_json::from_slice(&json)
                    .map_err(|e| Status::invalid_argument(e.to_string()))?,
            ),
        };
        // A state written before the API gained or lost fields takes the
        // attributes it has now: new ones null until the next read.
        let state = state::conform(&resource.attrs, state);
        Ok(Response::new(upgrade_resource_state::Response {
            upgraded_state: encode(&state),
            diagnostics: Vec::new(),
        }))
    }

    async fn configure_provider(
        &self,
        request: Request<configure_provider::Request>,
    ) -> Result<Response<configure_provider::Response>, Status> {
        let config = decode(request.into_inner().config.as_ref())?;
        let diagnostics = match config::connect(&self.prefix, &config, self.credentials) {
            Ok(connection) => {
                *self
                    .connection
                    .write()
                    .expect("the connection lock is not poisoned") = Some(connection);
                Vec::new()
            }
            Err(diagnostics) => diagnostics,
        };
        Ok(Response::new(configure_provider::Response { diagnostics }))
    }

    async fn read_resource(
        &self,
        request: Request<read_resource::Request>,
    ) -> Result<Response<read_resource::Response>, Status> {
        let request = request.into_inner();
        let current = decode(request.current_state.as_ref())?;
        let key = current.get(ID).as_str().unwrap_or_default().to_owned();
        let parent = current.get(PARENT).as_str().unwrap_or_default().to_owned();
        let resource = self.resource(&request.type_name)?;
        let outcome = self
            .calls(resource, async |calls| calls.read(&key, &parent).await)
            .await?;
        let (new_state, diagnostics) = split(outcome, current);
        Ok(Response::new(read_resource::Response {
            new_state: encode(&new_state),
            diagnostics,
            private: request.private,
        }))
    }

    async fn plan_resource_change(
        &self,
        request: Request<plan_resource_change::Request>,
    ) -> Result<Response<plan_resource_change::Response>, Status> {
        let request = request.into_inner();
        let resource = self.resource(&request.type_name)?;
        let prior = decode(request.prior_state.as_ref())?;
        let proposed = decode(request.proposed_new_state.as_ref())?;
        let config = decode(request.config.as_ref())?;
        let plan = plan(resource, &prior, proposed, &config);
        Ok(Response::new(plan_resource_change::Response {
            planned_state: encode(&plan.planned),
            requires_replace: plan
                .replace
                .iter()
                .map(|name| diagnostics::path(&[name]))
                .collect(),
            planned_private: request.prior_private,
            diagnostics: Vec::new(),
        }))
    }

    async fn apply_resource_change(
        &self,
        request: Request<apply_resource_change::Request>,
    ) -> Result<Response<apply_resource_change::Response>, Status> {
        let request = request.into_inner();
        let prior = decode(request.prior_state.as_ref())?;
        let planned = decode(request.planned_state.as_ref())?;
        let resource = self.resource(&request.type_name)?;
        let outcome = self
            .calls(resource, async |calls| {
                match (prior.is_null(), planned.is_null()) {
                    (true, _) => calls.create(&planned).await,
                    (false, true) => calls.delete(&prior).await.map(|()| Value::Null),
                    (false, false) => calls.update(&prior, &planned).await,
                }
            })
            .await?;
        // A failed create leaves nothing; a failed update or delete leaves
        // the item as it was.
        let (new_state, diagnostics) = split(outcome, prior);
        Ok(Response::new(apply_resource_change::Response {
            new_state: encode(&new_state),
            private: Vec::new(),
            diagnostics,
        }))
    }

    async fn import_resource_state(
        &self,
        request: Request<import_resource_state::Request>,
    ) -> Result<Response<import_resource_state::Response>, Status> {
        let request = request.into_inner();
        let id = request.id.clone();
        let resource = self.resource(&request.type_name)?;
        let outcome = self
            .calls(resource, async |calls| calls.import(&id).await)
            .await?;
        Ok(Response::new(match outcome {
            Ok(state) => import_resource_state::Response {
                imported_resources: vec![import_resource_state::ImportedResource {
                    type_name: request.type_name,
                    state: encode(&state),
                    private: Vec::new(),
                }],
                diagnostics: Vec::new(),
            },
            Err(diagnostics) => import_resource_state::Response {
                imported_resources: Vec::new(),
                diagnostics,
            },
        }))
    }

    async fn read_data_source(
        &self,
        request: Request<read_data_source::Request>,
    ) -> Result<Response<read_data_source::Response>, Status> {
        let request = request.into_inner();
        let config = decode(request.config.as_ref())?;
        let (resource, lists) = self.data_source(&request.type_name)?;
        let id = config.get(ID).as_str().unwrap_or_default().to_owned();
        let outcome = self
            .calls(resource, async |calls| match lists {
                true => calls.list(&config).await,
                false => calls.import(&id).await,
            })
            .await?;
        let (state, diagnostics) = split(outcome, Value::Null);
        Ok(Response::new(read_data_source::Response {
            state: encode(&state),
            diagnostics,
        }))
    }

    async fn stop_provider(
        &self,
        _: Request<stop_provider::Request>,
    ) -> Result<Response<stop_provider::Response>, Status> {
        Ok(Response::new(stop_provider::Response::default()))
    }
}

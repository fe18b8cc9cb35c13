//! The custom methods of `google.cloud.recommender.v1.Recommender`: marking
//! recommendations and insights over their generated storage, and the
//! singleton configs (AIP-156) kept in memory. Recommendations and insights
//! are the system's, not created through the API: the server starts with a
//! few ([`seed`]).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use protoapi_runtime::sql::SqlStore;
use protoapi_runtime::{Caller, Error};

use crate::google::cloud::recommender::v1::insight_state_info::State as InsightState;
use crate::google::cloud::recommender::v1::recommendation_state_info::State;
use crate::google::cloud::recommender::v1::*;

/// Every service on `store`, which starts with [`seed`]'s items.
pub async fn serve(services: crate::Services, store: Arc<SqlStore>) -> crate::Services {
    seed(&store).await.expect("the seeded recommendations");
    services.recommender(store)
}

/// Two recommendations and one insight, under a project and an organization.
async fn seed(store: &SqlStore) -> Result<(), Error> {
    for parent in ["projects/p1", "organizations/o1"] {
        let name =
            format!("{parent}/locations/global/recommenders/machine-type/recommendations/r1");
        if store.get_recommendation(&name).await?.is_none() {
            let recommendation = Recommendation {
                name,
                description: "Use a smaller machine type".into(),
                etag: "\"1\"".into(),
                state_info: Some(RecommendationStateInfo {
                    state: State::Active as i32,
                    ..Default::default()
                }),
                ..Default::default()
            };
            store.insert_recommendation(&recommendation).await?;
        }
    }
    let name = "projects/p1/locations/global/insightTypes/idle/insights/i1".to_owned();
    if store.get_insight(&name).await?.is_none() {
        let insight = Insight {
            name,
            description: "An idle machine".into(),
            etag: "\"1\"".into(),
            state_info: Some(InsightStateInfo {
                state: InsightState::Active as i32,
                ..Default::default()
            }),
            ..Default::default()
        };
        store.insert_insight(&insight).await?;
    }
    Ok(())
}

impl RecommenderHandler for SqlStore {
    async fn mark_insight_accepted(
        &self,
        _: &Caller,
        request: MarkInsightAcceptedRequest,
    ) -> Result<Insight, Error> {
        let mut insight = (self.get_insight(&request.name).await?)
            .ok_or_else(|| Error::not_found("recommender.googleapis.com/Insight", &request.name))?;
        check_etag(&insight.etag, &request.etag)?;
        insight.state_info = Some(InsightStateInfo {
            state: InsightState::Accepted as i32,
            state_metadata: request.state_metadata,
        });
        insight.etag = next_etag(&insight.etag);
        self.delete_insight(&request.name, None).await?;
        self.insert_insight(&insight).await?;
        Ok(insight)
    }

    async fn mark_recommendation_dismissed(
        &self,
        _: &Caller,
        request: MarkRecommendationDismissedRequest,
    ) -> Result<Recommendation, Error> {
        mark(
            self,
            &request.name,
            &request.etag,
            State::Dismissed,
            Default::default(),
        )
        .await
    }

    async fn mark_recommendation_claimed(
        &self,
        _: &Caller,
        request: MarkRecommendationClaimedRequest,
    ) -> Result<Recommendation, Error> {
        mark(
            self,
            &request.name,
            &request.etag,
            State::Claimed,
            request.state_metadata,
        )
        .await
    }

    async fn mark_recommendation_succeeded(
        &self,
        _: &Caller,
        request: MarkRecommendationSucceededRequest,
    ) -> Result<Recommendation, Error> {
        mark(
            self,
            &request.name,
            &request.etag,
            State::Succeeded,
            request.state_metadata,
        )
        .await
    }

    async fn mark_recommendation_failed(
        &self,
        _: &Caller,
        request: MarkRecommendationFailedRequest,
    ) -> Result<Recommendation, Error> {
        mark(
            self,
            &request.name,
            &request.etag,
            State::Failed,
            request.state_metadata,
        )
        .await
    }

    async fn get_recommender_config(
        &self,
        _: &Caller,
        request: GetRecommenderConfigRequest,
    ) -> Result<RecommenderConfig, Error> {
        let configs = RECOMMENDER_CONFIGS.lock().expect("configs");
        Ok(configs
            .get(&request.name)
            .cloned()
            .unwrap_or(RecommenderConfig {
                name: request.name,
                etag: "\"0\"".into(),
                ..Default::default()
            }))
    }

    async fn update_recommender_config(
        &self,
        _: &Caller,
        request: UpdateRecommenderConfigRequest,
    ) -> Result<RecommenderConfig, Error> {
        let mut config = request
            .recommender_config
            .ok_or_else(|| Error::invalid_field("recommender_config", "required"))?;
        let mut configs = RECOMMENDER_CONFIGS.lock().expect("configs");
        let current = configs
            .get(&config.name)
            .map_or("\"0\"".to_owned(), |c| c.etag.clone());
        if !config.etag.is_empty() {
            check_etag(&current, &config.etag)?;
        }
        config.etag = next_etag(&current);
        config.revision_id = config.etag.trim_matches('"').to_owned();
        configs.insert(config.name.clone(), config.clone());
        Ok(config)
    }

    async fn get_insight_type_config(
        &self,
        _: &Caller,
        request: GetInsightTypeConfigRequest,
    ) -> Result<InsightTypeConfig, Error> {
        Ok(InsightTypeConfig {
            name: request.name,
            etag: "\"0\"".into(),
            ..Default::default()
        })
    }

    async fn update_insight_type_config(
        &self,
        _: &Caller,
        _: UpdateInsightTypeConfigRequest,
    ) -> Result<InsightTypeConfig, Error> {
        Err(Error::unimplemented("UpdateInsightTypeConfig"))
    }
}

static RECOMMENDER_CONFIGS: Mutex<BTreeMap<String, RecommenderConfig>> =
    Mutex::new(BTreeMap::new());

/// Marks the recommendation `name` `state`, if `etag` is its etag.
async fn mark(
    store: &SqlStore,
    name: &str,
    etag: &str,
    state: State,
    state_metadata: std::collections::HashMap<String, String>,
) -> Result<Recommendation, Error> {
    let mut recommendation = (store.get_recommendation(name).await?)
        .ok_or_else(|| Error::not_found("recommender.googleapis.com/Recommendation", name))?;
    check_etag(&recommendation.etag, etag)?;
    recommendation.state_info = Some(RecommendationStateInfo {
        state: state as i32,
        state_metadata,
    });
    recommendation.etag = next_etag(&recommendation.etag);
    store.delete_recommendation(name, None).await?;
    store.insert_recommendation(&recommendation).await?;
    Ok(recommendation)
}

/// AIP-154: a stale etag is ABORTED.
fn check_etag(current: &str, sent: &str) -> Result<(), Error> {
    if current == sent {
        return Ok(());
    }
    Err(Error::new(
        protoapi_runtime::Code::Aborted,
        "ETAG_MISMATCH",
        format!("the etag {sent} is not the current one"),
    ))
}

/// `"2"` after `"1"`.
fn next_etag(etag: &str) -> String {
    let revision: u64 = etag.trim_matches('"').parse().unwrap_or(0);
    format!("\"{}\"", revision + 1)
}

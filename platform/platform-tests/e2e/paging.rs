//! Paging properties: walking pages returns exactly the expected items, in
//! order, under random sizes, skips and orders, and keyset continuation never
//! repeats an item when rows are inserted between requests.

use std::sync::{Arc, LazyLock};

use platform_api::platform::iam::v2::{
    CreateGroupRequest, Group, GroupServiceApi, ListGroupsRequest,
};
use platform_api::protoapi::v1::UidpFilter;
use platform_server::store::SqlStore;
use proptest::prelude::*;
use protoapi_runtime::Caller;
use protoapi_runtime::auth::Authorizer;
use protoapi_runtime::paging::PageTokens;
use protoapi_runtime::standard::ApiContext;

struct Fixture {
    runtime: tokio::runtime::Runtime,
    api: GroupServiceApi<SqlStore>,
    _dir: tempfile::TempDir,
}

/// One store for every case; each case works under a fresh root organization.
static FIXTURE: LazyLock<Fixture> = LazyLock::new(|| {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = runtime
        .block_on(platform_server::store::open_sqlite(dir.path()))
        .unwrap();
    let api = GroupServiceApi::new(
        Arc::new(store),
        ApiContext::new(PageTokens::new([3; 32]), Authorizer::allow_all()),
    );
    Fixture {
        runtime,
        api,
        _dir: dir,
    }
});

async fn create(api: &GroupServiceApi<SqlStore>, parent: &str, name: &str) -> Group {
    let group = Group {
        name: name.into(),
        ..Default::default()
    };
    let request = CreateGroupRequest {
        parent: parent.into(),
        group: Some(group),
    };
    api.create_group(&Caller::System, request).await.unwrap()
}

#[derive(Clone, Copy, Debug)]
enum Order {
    Uid,
    NameAsc,
    NameDesc,
    CreateTimeDesc,
    UidDesc,
}

impl Order {
    fn text(self) -> &'static str {
        match self {
            Order::Uid => "",
            Order::NameAsc => "name",
            Order::NameDesc => "name desc",
            Order::CreateTimeDesc => "createTime desc, name",
            Order::UidDesc => "uid desc",
        }
    }

    fn sort(self, items: &mut [Group]) {
        let micros = |g: &Group| protoapi_runtime::time::to_micros(g.create_time.as_ref().unwrap());
        items.sort_by(|a, b| match self {
            Order::Uid => a.uid.cmp(&b.uid),
            Order::NameAsc => a.name.cmp(&b.name).then(a.uid.cmp(&b.uid)),
            Order::NameDesc => b.name.cmp(&a.name).then(a.uid.cmp(&b.uid)),
            Order::CreateTimeDesc => micros(b)
                .cmp(&micros(a))
                .then(a.name.cmp(&b.name))
                .then(a.uid.cmp(&b.uid)),
            Order::UidDesc => b.uid.cmp(&a.uid),
        });
    }
}

fn order() -> impl Strategy<Value = Order> {
    prop_oneof![
        Just(Order::Uid),
        Just(Order::NameAsc),
        Just(Order::NameDesc),
        Just(Order::CreateTimeDesc),
        Just(Order::UidDesc),
    ]
}

fn list_request(
    root: &str,
    order: Order,
    page_size: i32,
    skip: i32,
    token: String,
) -> ListGroupsRequest {
    ListGroupsRequest {
        uidp: Some(UidpFilter {
            children_of: root.into(),
            ..Default::default()
        }),
        page_size,
        page_token: token,
        skip,
        order_by: order.text().into(),
        ..Default::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn pages_return_exactly_the_expected_items(
        names in prop::collection::vec("[ab]{1,2}", 0..30),
        page_size in 1..8i32,
        skip in 0..3i32,
        order in order(),
    ) {
        let Fixture { runtime, api, .. } = &*FIXTURE;
        runtime.block_on(async {
            let root = create(api, "", "root").await;
            let mut expected = Vec::new();
            for name in &names {
                expected.push(create(api, &root.uid, name).await);
            }
            order.sort(&mut expected);

            let mut position = 0;
            let mut token = String::new();
            loop {
                let request = list_request(&root.uid, order, page_size, skip, token);
                let page = api.list_groups(&Caller::System, request).await.unwrap();
                assert_eq!(page.total_count as usize, expected.len());
                let start = (position + skip as usize).min(expected.len());
                let end = (start + page_size as usize).min(expected.len());
                assert_eq!(page.items, expected[start..end], "page at {position} (skip {skip})");
                position = end;
                if page.next_page_token.is_empty() {
                    // The last page: nothing is left after it.
                    assert!(end == expected.len() || page.items.len() < page_size as usize);
                    break;
                }
                token = page.next_page_token;
            }
        });
    }

    #[test]
    fn inserts_between_pages_never_repeat_an_item(
        initial in 1..25usize,
        inserted_per_page in 0..3usize,
        page_size in 1..6i32,
        order in order(),
    ) {
        let Fixture { runtime, api, .. } = &*FIXTURE;
        runtime.block_on(async {
            let root = create(api, "", "root").await;
            let mut originals = Vec::new();
            for i in 0..initial {
                originals.push(create(api, &root.uid, &format!("g{}", i % 4)).await.uid);
            }
            let mut seen = std::collections::HashSet::new();
            let mut token = String::new();
            loop {
                let request = list_request(&root.uid, order, page_size, 0, token);
                let page = api.list_groups(&Caller::System, request).await.unwrap();
                for item in &page.items {
                    assert!(seen.insert(item.uid.clone()), "{} returned twice", item.uid);
                }
                for i in 0..inserted_per_page {
                    create(api, &root.uid, &format!("g{}", i % 4)).await;
                }
                if page.next_page_token.is_empty() {
                    break;
                }
                token = page.next_page_token;
            }
            for uid in &originals {
                assert!(seen.contains(uid), "{uid} stored before the walk was never returned");
            }
        });
    }
}

//! IAM v2 groups over gRPC on the same port, with the generated client.

use platform_api::platform::iam::v2::group_service_client::GroupServiceClient;
use platform_api::platform::iam::v2::{
    CreateGroupRequest, DeleteGroupRequest, GetGroupRequest, Group, ListGroupsRequest,
    UpdateGroupRequest,
};
use platform_api::protoapi::v1::UidpFilter;
use platform_tests::{TestServer, is_child_uid};
use tonic_types::StatusExt;

#[tokio::test]
async fn group_lifecycle_over_grpc() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let mut client = GroupServiceClient::with_interceptor(
        server.channel().await,
        platform_tests::bearer(&server.admin_token),
    );

    let root = client
        .create_group(CreateGroupRequest {
            parent: String::new(),
            group: Some(Group {
                name: "acme".into(),
                ..Default::default()
            }),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(is_child_uid(&root.uid, None));
    let child = client
        .create_group(CreateGroupRequest {
            parent: root.uid.clone(),
            group: Some(Group {
                name: "team".into(),
                ..Default::default()
            }),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(is_child_uid(&child.uid, Some(&root.uid)));

    let got = client
        .get_group(GetGroupRequest {
            uid: child.uid.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got, child);

    let listed = client
        .list_groups(ListGroupsRequest {
            uidp: Some(UidpFilter {
                children_of: root.uid.clone(),
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(listed.items, vec![child.clone()]);
    assert_eq!(listed.total_count, 1);

    let updated = client
        .update_group(UpdateGroupRequest {
            uid: child.uid.clone(),
            group: Some(Group {
                description: "new".into(),
                name: "ignored".into(),
                ..Default::default()
            }),
            update_mask: Some(prost_types_mask(&["description"])),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(updated.description, "new");
    assert_eq!(updated.name, "team");
    let micros =
        |group: &Group| protoapi_runtime::time::to_micros(group.update_time.as_ref().unwrap());
    assert!(micros(&updated) > micros(&child), "updateTime advances");

    // The same error model as REST, in grpc-status-details-bin.
    let bad_mask = client
        .update_group(UpdateGroupRequest {
            uid: child.uid.clone(),
            group: Some(Group::default()),
            update_mask: Some(prost_types_mask(&["createTime", "colour"])),
        })
        .await
        .unwrap_err();
    assert_eq!(bad_mask.code(), tonic::Code::InvalidArgument);
    let details = bad_mask.get_error_details();
    let fields: Vec<&str> = details
        .bad_request()
        .unwrap()
        .field_violations
        .iter()
        .map(|v| v.field.as_str())
        .collect();
    assert_eq!(fields, ["updateMask.createTime", "updateMask.colour"]);

    client
        .delete_group(DeleteGroupRequest {
            uid: child.uid.clone(),
            etag: String::new(),
        })
        .await
        .unwrap();
    let missing = client
        .get_group(GetGroupRequest {
            uid: child.uid.clone(),
        })
        .await
        .unwrap_err();
    assert_eq!(missing.code(), tonic::Code::NotFound);
    let details = missing.get_error_details();
    let info = details.resource_info().expect("a ResourceInfo detail");
    assert_eq!(info.resource_type, "iam.platform/Group");
    assert_eq!(info.resource_name, child.uid);
    let error_info = details.error_info().expect("an ErrorInfo detail");
    assert_eq!(error_info.reason, "RESOURCE_NOT_FOUND");
    assert_eq!(error_info.domain, "iam.platform");
    server.stop().await;
}

fn prost_types_mask(paths: &[&str]) -> prost_types::FieldMask {
    prost_types::FieldMask {
        paths: paths.iter().map(|p| (*p).to_owned()).collect(),
    }
}

//! A client that knows nothing but the server's reflection service: it
//! discovers the API, builds its descriptors, and calls it with dynamic
//! messages — what grpcurl or a Python grpcio client does.

use platform_tests::TestServer;
use platform_tests::call;
use prost::Message;
use prost_reflect::DescriptorPool;
use tonic_reflection::pb::v1alpha::ServerReflectionRequest;
use tonic_reflection::pb::v1alpha::server_reflection_client::ServerReflectionClient;
use tonic_reflection::pb::v1alpha::server_reflection_request::MessageRequest;
use tonic_reflection::pb::v1alpha::server_reflection_response::MessageResponse;
use tonic_types::StatusExt;

#[tokio::test]
async fn reflection_only_client_drives_groups() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let channel = server.channel().await;

    let services = reflect(&channel, MessageRequest::ListServices(String::new())).await;
    let MessageResponse::ListServicesResponse(list) = services else {
        panic!("{services:?}")
    };
    let names: Vec<&str> = list.service.iter().map(|s| s.name.as_str()).collect();
    assert!(names.contains(&"platform.iam.v2.GroupService"), "{names:?}");
    // Health resolves by reflection, as grpcurl asks for it.
    assert!(names.contains(&"grpc.health.v1.Health"), "{names:?}");
    let health = MessageRequest::FileContainingSymbol("grpc.health.v1.Health.Check".into());
    let MessageResponse::FileDescriptorResponse(health) = reflect(&channel, health).await else {
        panic!("the health service's file")
    };
    let file = prost_types::FileDescriptorProto::decode(health.file_descriptor_proto[0].as_slice());
    assert_eq!(file.unwrap().package(), "grpc.health.v1");

    // Fetch the service's file, then its imports by name, as real clients do.
    let mut files = Vec::new();
    let mut request = MessageRequest::FileContainingSymbol("platform.iam.v2.GroupService".into());
    loop {
        let response = reflect(&channel, request).await;
        let MessageResponse::FileDescriptorResponse(response) = response else {
            panic!("{response:?}")
        };
        for bytes in &response.file_descriptor_proto {
            let file = prost_types::FileDescriptorProto::decode(bytes.as_slice()).unwrap();
            if !files
                .iter()
                .any(|f: &prost_types::FileDescriptorProto| f.name == file.name)
            {
                files.push(file);
            }
        }
        let missing = files
            .iter()
            .flat_map(|f| f.dependency.iter())
            .find(|dependency| !files.iter().any(|f| f.name.as_ref() == Some(dependency)));
        match missing {
            Some(name) => request = MessageRequest::FileByFilename(name.clone()),
            None => break,
        }
    }
    let mut pool = DescriptorPool::new();
    pool.add_file_descriptor_protos(files).unwrap();
    let service = pool
        .get_service_by_name("platform.iam.v2.GroupService")
        .unwrap();
    let method = |name: &str| service.methods().find(|m| m.name() == name).unwrap();

    let root = call(
        &channel,
        Some(&server.admin_token),
        &method("CreateGroup"),
        r#"{"group": {"name": "acme"}}"#,
    )
    .await
    .unwrap();
    let root_uid = root
        .get_field_by_name("uid")
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(root_uid.len(), 40);
    let child = call(
        &channel,
        Some(&server.admin_token),
        &method("CreateGroup"),
        &format!(r#"{{"parent": "{root_uid}", "group": {{"name": "team"}}}}"#),
    )
    .await
    .unwrap();
    let child_uid = child
        .get_field_by_name("uid")
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned();
    let listed = call(
        &channel,
        Some(&server.admin_token),
        &method("ListGroups"),
        &format!(r#"{{"uidp": {{"childrenOf": "{root_uid}"}}}}"#),
    )
    .await
    .unwrap();
    assert_eq!(
        listed.get_field_by_name("totalCount").map(|v| v.as_i32()),
        None,
        "proto names, not JSON names"
    );
    assert_eq!(
        listed.get_field_by_name("total_count").unwrap().as_i32(),
        Some(1)
    );

    call(
        &channel,
        Some(&server.admin_token),
        &method("DeleteGroup"),
        &format!(r#"{{"uid": "{child_uid}"}}"#),
    )
    .await
    .unwrap();
    let missing = call(
        &channel,
        Some(&server.admin_token),
        &method("GetGroup"),
        &format!(r#"{{"uid": "{child_uid}"}}"#),
    )
    .await
    .unwrap_err();
    assert_eq!(missing.code(), tonic::Code::NotFound);
    let details = missing.get_error_details();
    assert_eq!(details.resource_info().unwrap().resource_name, child_uid);
    assert_eq!(details.error_info().unwrap().reason, "RESOURCE_NOT_FOUND");
    server.stop().await;
}

async fn reflect(channel: &tonic::transport::Channel, request: MessageRequest) -> MessageResponse {
    let mut client = ServerReflectionClient::new(channel.clone());
    let request = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(request),
    };
    let mut responses = client
        .server_reflection_info(tokio_stream_once(request))
        .await
        .unwrap()
        .into_inner();
    responses
        .message()
        .await
        .unwrap()
        .unwrap()
        .message_response
        .unwrap()
}

fn tokio_stream_once<T: Send + 'static>(
    item: T,
) -> impl tonic::codegen::tokio_stream::Stream<Item = T> {
    tonic::codegen::tokio_stream::iter([item])
}

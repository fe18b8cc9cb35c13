//! A client that knows nothing but the server's reflection service: it
//! discovers the API, builds its descriptors, and calls it with dynamic
//! messages — what grpcurl or a Python grpcio client does.

use bytes::Buf;
use e2e::TestServer;
use prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor, MethodDescriptor};
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
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
        &method("DeleteGroup"),
        &format!(r#"{{"uid": "{child_uid}"}}"#),
    )
    .await
    .unwrap();
    let missing = call(
        &channel,
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

/// A unary call with a request given as JSON.
async fn call(
    channel: &tonic::transport::Channel,
    method: &MethodDescriptor,
    json: &str,
) -> Result<DynamicMessage, tonic::Status> {
    let mut deserializer = serde_json::Deserializer::from_str(json);
    let request = DynamicMessage::deserialize(method.input(), &mut deserializer).unwrap();
    let mut grpc = tonic::client::Grpc::new(channel.clone());
    grpc.ready().await.unwrap();
    let path = format!("/{}/{}", method.parent_service().full_name(), method.name());
    grpc.unary(
        tonic::Request::new(request),
        path.parse().unwrap(),
        DynamicCodec(method.output()),
    )
    .await
    .map(tonic::Response::into_inner)
}

struct DynamicCodec(MessageDescriptor);

impl Codec for DynamicCodec {
    type Encode = DynamicMessage;
    type Decode = DynamicMessage;
    type Encoder = DynamicCodec;
    type Decoder = DynamicCodec;

    fn encoder(&mut self) -> Self::Encoder {
        DynamicCodec(self.0.clone())
    }

    fn decoder(&mut self) -> Self::Decoder {
        DynamicCodec(self.0.clone())
    }
}

impl Encoder for DynamicCodec {
    type Item = DynamicMessage;
    type Error = tonic::Status;

    fn encode(
        &mut self,
        item: DynamicMessage,
        dst: &mut EncodeBuf<'_>,
    ) -> Result<(), tonic::Status> {
        item.encode(dst)
            .map_err(|e| tonic::Status::internal(e.to_string()))
    }
}

impl Decoder for DynamicCodec {
    type Item = DynamicMessage;
    type Error = tonic::Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<DynamicMessage>, tonic::Status> {
        let bytes = src.copy_to_bytes(src.remaining());
        DynamicMessage::decode(self.0.clone(), bytes)
            .map(Some)
            .map_err(|e| tonic::Status::internal(e.to_string()))
    }
}

"""A gRPC client that knows only the server's reflection service.

It discovers GroupService through reflection (grpcio-reflection speaks
v1alpha), builds message classes from the served descriptors, and drives a
group through create, get, list, update and delete, checking the rich error
details of a missing group in grpc-status-details-bin.

Usage: python3 reflection_client.py HOST:PORT TOKEN_FILE
"""

import sys

import grpc
from google.protobuf import descriptor_pool, json_format, message_factory
from google.rpc import error_details_pb2
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)
from grpc_status import rpc_status

SERVICE = "platform.iam.v2.GroupService"


class BearerToken(grpc.UnaryUnaryClientInterceptor, grpc.StreamStreamClientInterceptor):
    """Sends `authorization: Bearer <token>` with every call."""

    def __init__(self, token):
        self.metadata = [("authorization", f"Bearer {token}")]

    def _with_token(self, details):
        metadata = list(details.metadata or []) + self.metadata
        return details._replace(metadata=metadata)

    def intercept_unary_unary(self, continuation, details, request):
        return continuation(self._with_token(details), request)

    def intercept_stream_stream(self, continuation, details, requests):
        return continuation(self._with_token(details), requests)


def main(target, token_file):
    with open(token_file) as file:
        token = file.read().strip()
    channel = grpc.intercept_channel(grpc.insecure_channel(target), BearerToken(token))
    database = ProtoReflectionDescriptorDatabase(channel)
    services = database.get_services()
    assert SERVICE in services, services
    pool = descriptor_pool.DescriptorPool(database)
    service = pool.FindServiceByName(SERVICE)

    def call(method_name, request_json):
        method = service.methods_by_name[method_name]
        request_class = message_factory.GetMessageClass(method.input_type)
        response_class = message_factory.GetMessageClass(method.output_type)
        stub = channel.unary_unary(
            f"/{SERVICE}/{method_name}",
            request_serializer=request_class.SerializeToString,
            response_deserializer=response_class.FromString,
        )
        return stub(json_format.Parse(request_json, request_class()))

    root = call("CreateGroup", '{"group": {"name": "acme"}}')
    assert len(root.uid) == 40, root.uid
    child = call("CreateGroup", '{"parent": "%s", "group": {"name": "team"}}' % root.uid)
    assert child.uid.startswith(root.uid + "/"), child.uid
    assert call("GetGroup", '{"uid": "%s"}' % child.uid).name == "team"
    listed = call("ListGroups", '{"uidp": {"childrenOf": "%s"}}' % root.uid)
    assert [g.uid for g in listed.items] == [child.uid], listed
    assert listed.total_count == 1
    updated = call(
        "UpdateGroup",
        '{"uid": "%s", "group": {"description": "new", "name": "x"}, "updateMask": "description"}'
        % child.uid,
    )
    assert (updated.name, updated.description) == ("team", "new"), updated
    call("DeleteGroup", '{"uid": "%s"}' % child.uid)

    try:
        call("GetGroup", '{"uid": "%s"}' % child.uid)
        raise AssertionError("a deleted group was found")
    except grpc.RpcError as error:
        assert error.code() == grpc.StatusCode.NOT_FOUND, error
        status = rpc_status.from_call(error)
        assert status is not None, "no grpc-status-details-bin"
        infos = {}
        for detail in status.details:
            for kind in (error_details_pb2.ErrorInfo, error_details_pb2.ResourceInfo):
                if detail.Is(kind.DESCRIPTOR):
                    value = kind()
                    detail.Unpack(value)
                    infos[kind.DESCRIPTOR.name] = value
        assert infos["ResourceInfo"].resource_name == child.uid, infos
        assert infos["ResourceInfo"].resource_type == "iam.platform/Group", infos
        assert infos["ErrorInfo"].reason == "RESOURCE_NOT_FOUND", infos
        assert infos["ErrorInfo"].domain == "iam.platform", infos
    print("python grpcio reflection client: ok")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

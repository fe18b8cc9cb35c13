"""Walks one corpus API served by .ci/corpus-walk over REST (JSON over
HTTP/1.1) and over gRPC through a client that knows only the server's
reflection service (grpcio-reflection).

Usage: python3 walk.py API BASE_URL
"""

import json
import sys
import urllib.error
import urllib.request

import grpc
from google.protobuf import descriptor_pool, json_format, message_factory
from google.rpc import error_details_pb2
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)
from grpc_status import rpc_status


class Rest:
    def __init__(self, base):
        self.base = base

    def call(self, method, path, body=None):
        """The status and the JSON answer of one request."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method)
        request.add_header("content-type", "application/json")
        try:
            with urllib.request.urlopen(request) as response:
                return response.status, json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"{}")

    def ok(self, method, path, body=None):
        status, answer = self.call(method, path, body)
        assert status == 200, f"{method} {path}: {status} {answer}"
        return answer

    def every(self, path, items):
        """Every item of a list, one item per page (the page tokens walked)."""
        found, token = [], ""
        join = "&" if "?" in path else "?"
        while True:
            page = self.ok("GET", f"{path}{join}pageSize=1&pageToken={token}")
            found += page.get(items, [])
            token = page.get("nextPageToken", "")
            if not token:
                return found


class Grpc:
    """Calls any method of `service` with JSON requests, its types from reflection."""

    def __init__(self, base, service):
        self.channel = grpc.insecure_channel(base.removeprefix("http://"))
        database = ProtoReflectionDescriptorDatabase(self.channel)
        assert service in database.get_services(), database.get_services()
        self.name = service
        self.service = descriptor_pool.DescriptorPool(database).FindServiceByName(service)

    def call(self, method_name, request):
        method = self.service.methods_by_name[method_name]
        request_class = message_factory.GetMessageClass(method.input_type)
        response_class = message_factory.GetMessageClass(method.output_type)
        stub = self.channel.unary_unary(
            f"/{self.name}/{method_name}",
            request_serializer=request_class.SerializeToString,
            response_deserializer=response_class.FromString,
        )
        answer = stub(json_format.ParseDict(request, request_class()))
        # `Any` fields (an operation's) name types the reflection pool resolves.
        return json_format.MessageToDict(answer, descriptor_pool=self.service.file.pool)

    def refused(self, method_name, request):
        """The status code and rich details of a refused call."""
        try:
            self.call(method_name, request)
        except grpc.RpcError as error:
            status = rpc_status.from_call(error)
            details = []
            for detail in status.details if status else []:
                if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                    info = error_details_pb2.ErrorInfo()
                    detail.Unpack(info)
                    details.append(info.reason)
            return error.code(), details
        raise AssertionError(f"{method_name} {request} was not refused")


def library(base):
    rest = Rest(base)
    shelf = rest.ok("POST", "/v1/shelves", {"theme": "Fiction"})
    name = shelf["name"]
    assert name.startswith("shelves/"), shelf
    assert rest.ok("GET", f"/v1/{name}")["theme"] == "Fiction"
    other = rest.ok("POST", "/v1/shelves", {"theme": "Poetry"})["name"]
    assert {s["name"] for s in rest.every("/v1/shelves", "shelves")} >= {name, other}

    dune = rest.ok("POST", f"/v1/{name}/books", {"title": "Dune", "author": "Herbert"})
    assert dune["name"].startswith(f"{name}/books/"), dune
    rest.ok("POST", f"/v1/{name}/books", {"title": "Emma", "author": "Austen"})
    assert len(rest.every(f"/v1/{name}/books", "books")) == 2
    status, missing = rest.call("POST", "/v1/shelves/missing/books", {"title": "Lost"})
    assert status == 404, missing

    read = rest.ok("PATCH", f"/v1/{dune['name']}?updateMask=read", {"read": True, "title": "x"})
    assert read["read"] is True and read["title"] == "Dune", read
    moved = rest.ok("POST", f"/v1/{dune['name']}:move", {"otherShelfName": other})
    assert moved["name"].startswith(f"{other}/books/"), moved
    assert rest.call("GET", f"/v1/{dune['name']}")[0] == 404
    assert [b["title"] for b in rest.every(f"/v1/{other}/books", "books")] == ["Dune"]
    rest.ok("DELETE", f"/v1/{moved['name']}")
    assert rest.call("GET", f"/v1/{moved['name']}")[0] == 404

    rpc = Grpc(base, "google.example.library.v1.LibraryService")
    made = rpc.call("CreateShelf", {"shelf": {"theme": "Drama"}})
    assert rpc.call("GetShelf", {"name": made["name"]})["theme"] == "Drama"
    book = rpc.call("CreateBook", {"parent": made["name"], "book": {"title": "Lear"}})
    listed = rpc.call("ListBooks", {"parent": made["name"]})
    assert [b["name"] for b in listed["books"]] == [book["name"]], listed
    rpc.call("DeleteBook", {"name": book["name"]})
    rpc.call("DeleteShelf", {"name": made["name"]})
    code, reasons = rpc.refused("GetShelf", {"name": made["name"]})
    assert code == grpc.StatusCode.NOT_FOUND, code
    assert reasons, "a NOT_FOUND carries an ErrorInfo"
    code, _ = rpc.refused("GetShelf", {"name": "books/1"})
    assert code == grpc.StatusCode.INVALID_ARGUMENT, code


def scheduler(base):
    rest = Rest(base)
    parent = "projects/walk/locations/us-central1"
    job = {"description": "nightly", "schedule": "0 3 * * *", "timeZone": "UTC",
           "httpTarget": {"uri": "https://example.com/run", "httpMethod": "POST"}}
    created = rest.ok("POST", f"/v1/{parent}/jobs", job)
    name = created["name"]
    assert name.startswith(f"{parent}/jobs/"), created
    assert rest.ok("GET", f"/v1/{name}")["httpTarget"]["uri"] == "https://example.com/run"
    rest.ok("POST", f"/v1/{parent}/jobs", {**job, "description": "hourly"})
    assert len(rest.every(f"/v1/{parent}/jobs", "jobs")) == 2
    assert rest.every("/v1/projects/other/locations/us-central1/jobs", "jobs") == []

    patched = rest.ok("PATCH", f"/v1/{name}?updateMask=description", {"description": "weekly"})
    assert patched["description"] == "weekly" and patched["schedule"] == "0 3 * * *", patched
    assert rest.ok("POST", f"/v1/{name}:pause", {})["state"] == "PAUSED"
    status, refused = rest.call("POST", f"/v1/{name}:run", {})
    assert status == 400 and refused["error"]["status"] == "FAILED_PRECONDITION", refused
    assert rest.ok("POST", f"/v1/{name}:resume", {})["state"] == "ENABLED"
    assert rest.ok("POST", f"/v1/{name}:run", {})["name"] == name
    assert rest.ok("GET", f"/v1/{name}")["description"] == "weekly"

    rpc = Grpc(base, "google.cloud.scheduler.v1.CloudScheduler")
    made = rpc.call("CreateJob", {"parent": parent, "job": {**job, "description": "grpc"}})
    assert rpc.call("PauseJob", {"name": made["name"]})["state"] == "PAUSED"
    assert rpc.call("GetJob", {"name": made["name"]})["state"] == "PAUSED"
    listed = rpc.call("ListJobs", {"parent": parent, "pageSize": 10})
    assert len(listed["jobs"]) == 3, listed
    rpc.call("DeleteJob", {"name": made["name"]})
    code, reasons = rpc.refused("GetJob", {"name": made["name"]})
    assert code == grpc.StatusCode.NOT_FOUND and reasons, (code, reasons)
    rest.ok("DELETE", f"/v1/{name}")
    assert rest.call("GET", f"/v1/{name}")[0] == 404


def essentialcontacts(base):
    rest = Rest(base)
    contact = {"email": "ops@example.com", "languageTag": "en",
               "notificationCategorySubscriptions": ["SECURITY"]}
    # One resource under three parent patterns, each served.
    names = {}
    for parent in ["projects/p1", "folders/f1", "organizations/o1"]:
        made = rest.ok("POST", f"/v1/{parent}/contacts", contact)
        assert made["name"].startswith(f"{parent}/contacts/"), made
        names[parent] = made["name"]
        assert rest.ok("GET", f"/v1/{made['name']}")["email"] == "ops@example.com"
        listed = rest.every(f"/v1/{parent}/contacts", "contacts")
        assert [c["name"] for c in listed] == [made["name"]], listed
        patched = rest.ok("PATCH", f"/v1/{made['name']}?updateMask=languageTag",
                          {"languageTag": "fr", "email": "ignored@example.com"})
        assert patched["languageTag"] == "fr" and patched["email"] == "ops@example.com", patched
    status, missing = rest.call("POST", "/v1/projects/p1/contacts", {"languageTag": "en"})
    assert status == 400, missing
    rest.ok("POST", "/v1/folders/f1/contacts:sendTestMessage",
            {"contacts": [names["folders/f1"]], "notificationCategory": "SECURITY"})
    status, refused = rest.call("POST", "/v1/folders/f1/contacts:sendTestMessage",
                                {"contacts": [names["projects/p1"]], "notificationCategory": "SECURITY"})
    assert status == 404, refused

    rpc = Grpc(base, "google.cloud.essentialcontacts.v1.EssentialContactsService")
    made = rpc.call("CreateContact", {"parent": "organizations/o2", "contact": contact})
    assert rpc.call("GetContact", {"name": made["name"]})["languageTag"] == "en"
    listed = rpc.call("ListContacts", {"parent": "organizations/o2"})
    assert [c["name"] for c in listed["contacts"]] == [made["name"]], listed
    for name in [made["name"], *names.values()]:
        rpc.call("DeleteContact", {"name": name})
    code, reasons = rpc.refused("GetContact", {"name": names["folders/f1"]})
    assert code == grpc.StatusCode.NOT_FOUND and reasons, (code, reasons)


def recommender(base):
    rest = Rest(base)
    project = "projects/p1/locations/global/recommenders/machine-type"
    organization = "organizations/o1/locations/global/recommenders/machine-type"
    listed = rest.every(f"/v1/{project}/recommendations", "recommendations")
    assert [r["name"] for r in listed] == [f"{project}/recommendations/r1"], listed
    name = listed[0]["name"]
    assert rest.ok("GET", f"/v1/{name}")["stateInfo"]["state"] == "ACTIVE"
    assert len(rest.every(f"/v1/{organization}/recommendations", "recommendations")) == 1
    status, stale = rest.call("POST", f"/v1/{name}:markClaimed", {"etag": "\"0\""})
    assert status == 409 and stale["error"]["status"] == "ABORTED", stale
    claimed = rest.ok("POST", f"/v1/{name}:markClaimed",
                      {"etag": listed[0]["etag"], "stateMetadata": {"by": "walk"}})
    assert claimed["stateInfo"] == {"state": "CLAIMED", "stateMetadata": {"by": "walk"}}, claimed
    succeeded = rest.ok("POST", f"/v1/{name}:markSucceeded", {"etag": claimed["etag"]})
    assert rest.ok("GET", f"/v1/{name}")["stateInfo"]["state"] == "SUCCEEDED", succeeded

    # The singleton config (AIP-156), by its handler.
    config = rest.ok("GET", f"/v1/{project}/config")
    assert config["name"] == f"{project}/config", config
    updated = rest.ok("PATCH", f"/v1/{project}/config",
                      {"etag": config["etag"], "displayName": "Machines"})
    assert updated["displayName"] == "Machines" and updated["etag"] != config["etag"], updated
    assert rest.ok("GET", f"/v1/{project}/config")["displayName"] == "Machines"

    insights = "projects/p1/locations/global/insightTypes/idle"
    listed = rest.every(f"/v1/{insights}/insights", "insights")
    accepted = rest.ok("POST", f"/v1/{listed[0]['name']}:markAccepted", {"etag": listed[0]["etag"]})
    assert accepted["stateInfo"]["state"] == "ACCEPTED", accepted

    rpc = Grpc(base, "google.cloud.recommender.v1.Recommender")
    other = f"{organization}/recommendations/r1"
    found = rpc.call("GetRecommendation", {"name": other})
    dismissed = rpc.call("MarkRecommendationDismissed", {"name": other, "etag": found["etag"]})
    assert dismissed["stateInfo"]["state"] == "DISMISSED", dismissed
    listed = rpc.call("ListRecommendations", {"parent": organization})
    assert [r["stateInfo"]["state"] for r in listed["recommendations"]] == ["DISMISSED"], listed
    code, reasons = rpc.refused("GetRecommendation", {"name": f"{organization}/recommendations/r9"})
    assert code == grpc.StatusCode.NOT_FOUND and reasons, (code, reasons)


def done(rest, operation):
    """The operation once done (AIP-151), waited for over REST."""
    name = operation["name"]
    assert name.startswith("projects/") and "/operations/" in name, operation
    finished = rest.ok("POST", f"/v1/{name}:wait", {})
    assert finished["done"] is True, finished
    assert rest.ok("GET", f"/v1/{name}") == finished
    return finished


def response(rest, operation):
    """What a long-running write made, once done; it must have succeeded."""
    finished = done(rest, operation)
    assert "error" not in finished, finished
    return finished["response"]


def grpc_done(base, operation):
    """The operation once done, waited for over gRPC."""
    operations = Grpc(base, "google.longrunning.Operations")
    finished = operations.call("WaitOperation", {"name": operation["name"], "timeout": "10s"})
    assert finished.get("done") is True, finished
    return finished


def certificatemanager(base):
    rest = Rest(base)
    parent = "projects/walk/locations/global"
    certificate = {"description": "the web front", "labels": {"team": "web"},
                   "selfManaged": {"pemCertificate": "-----BEGIN CERTIFICATE-----",
                                   "pemPrivateKey": "-----BEGIN PRIVATE KEY-----"}}
    started = rest.ok("POST", f"/v1/{parent}/certificates?certificateId=web", certificate)
    assert started["metadata"]["@type"].endswith("certificatemanager.v1.OperationMetadata"), started
    assert started["metadata"]["verb"] == "create", started
    made = response(rest, started)
    assert made["@type"].endswith("certificatemanager.v1.Certificate"), made
    name = f"{parent}/certificates/web"
    assert made["name"] == name, made
    assert rest.ok("GET", f"/v1/{name}")["description"] == "the web front"
    response(rest, rest.ok("POST", f"/v1/{parent}/certificates?certificateId=api",
                           {**certificate, "description": "the api"}))
    assert len(rest.every(f"/v1/{parent}/certificates", "certificates")) == 2
    # A bad request is refused before any operation starts, storage's
    # findings (a taken id) included.
    status, taken = rest.call("POST", f"/v1/{parent}/certificates?certificateId=web", certificate)
    assert status == 409, taken
    status, refused = rest.call("POST", f"/v1/{parent}/certificates?certificateId=Bad_Id", certificate)
    assert status == 400, refused

    changed = response(rest, rest.ok("PATCH", f"/v1/{name}?updateMask=description",
                                     {"description": "renewed"}))
    assert changed["description"] == "renewed" and changed["labels"] == {"team": "web"}, changed
    operations = rest.every(f"/v1/{parent}/operations", "operations")
    assert len(operations) == 3 and all(o["done"] for o in operations), operations
    deleted = response(rest, rest.ok("DELETE", f"/v1/{name}"))
    assert deleted["@type"].endswith("google.protobuf.Empty"), deleted
    assert rest.call("GET", f"/v1/{name}")[0] == 404

    rpc = Grpc(base, "google.cloud.certificatemanager.v1.CertificateManager")
    started = rpc.call("CreateCertificateMap", {"parent": parent, "certificateMapId": "edge",
                                                "certificateMap": {"description": "edge"}})
    finished = grpc_done(base, started)
    assert finished["response"]["name"] == f"{parent}/certificateMaps/edge", finished
    assert rpc.call("GetCertificateMap", {"name": f"{parent}/certificateMaps/edge"})["description"] == "edge"
    entry = {"parent": f"{parent}/certificateMaps/edge", "certificateMapEntryId": "www",
             "certificateMapEntry": {"hostname": "www.example.com",
                                     "certificates": [f"{parent}/certificates/api"]}}
    finished = grpc_done(base, rpc.call("CreateCertificateMapEntry", entry))
    assert finished["response"]["hostname"] == "www.example.com", finished
    code, _ = rpc.refused("DeleteCertificateMap", {"name": f"{parent}/certificateMaps/edge"})
    assert code == grpc.StatusCode.FAILED_PRECONDITION, f"it has entries: {code}"
    code, reasons = rpc.refused("GetCertificate", {"name": name})
    assert code == grpc.StatusCode.NOT_FOUND and reasons, (code, reasons)


def apphub(base):
    rest = Rest(base)
    parent = "projects/host/locations/us-east1"
    application = {"displayName": "shop", "scope": {"type": "REGIONAL"},
                   "attributes": {"criticality": {"type": "MISSION_CRITICAL"}}}
    made = response(rest, rest.ok("POST", f"/v1/{parent}/applications?applicationId=shop", application))
    name = f"{parent}/applications/shop"
    assert made["name"] == name and made["displayName"] == "shop", made
    assert rest.ok("GET", f"/v1/{name}")["scope"]["type"] == "REGIONAL"
    changed = response(rest, rest.ok("PATCH", f"/v1/{name}?updateMask=description",
                                     {"description": "the shop"}))
    assert changed["description"] == "the shop" and changed["displayName"] == "shop", changed
    status, refused = rest.call("POST", f"/v1/{parent}/applications?applicationId=x", {"displayName": "x"})
    assert status == 400, f"scope is required: {refused}"
    assert [a["name"] for a in rest.every(f"/v1/{parent}/applications", "applications")] == [name]

    global_ = "projects/host/locations/global"
    attachment = {"serviceProject": "projects/tenant"}
    path = f"/v1/{global_}/serviceProjectAttachments?serviceProjectAttachmentId=tenant"
    made = response(rest, rest.ok("POST", path, attachment))
    assert made["name"] == f"{global_}/serviceProjectAttachments/tenant", made
    # A custom method this walk leaves unimplemented.
    status, _ = rest.call("GET", f"/v1/{global_}:lookupServiceProjectAttachment")
    assert status == 501, status

    rpc = Grpc(base, "google.cloud.apphub.v1.AppHub")
    started = rpc.call("DeleteServiceProjectAttachment", {"name": made["name"]})
    finished = grpc_done(base, started)
    assert "error" not in finished, finished
    finished = grpc_done(base, rpc.call("DeleteApplication", {"name": name}))
    assert "error" not in finished, finished
    code, reasons = rpc.refused("GetApplication", {"name": name})
    assert code == grpc.StatusCode.NOT_FOUND and reasons, (code, reasons)


WALKS = {
    "library": library,
    "scheduler": scheduler,
    "essentialcontacts": essentialcontacts,
    "recommender": recommender,
    "certificatemanager": certificatemanager,
    "apphub": apphub,
}

if __name__ == "__main__":
    WALKS[sys.argv[1]](sys.argv[2])
    print(f"walk.py: {sys.argv[1]} walked over REST and gRPC")

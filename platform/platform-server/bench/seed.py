#!/usr/bin/env python3
"""Seeds the benchmark's data over the REST API with the admin token in
TOKEN_FILE: a root organization `bench` holding COUNT child groups
(`group-0000`, ... with a description), created one after the other on one
keep-alive connection, and an identity `bench-reader` in it bound to the
built-in `viewer` role there (a caller without the administrator's
shortcut: its requests are authorized from its grants).

Prints {"root": uid, "children": [uid, ...], "reader": uid} as JSON.

    python3 platform/platform-server/bench/seed.py URL TOKEN_FILE COUNT
"""
import http.client
import json
import sys
import urllib.parse


def main(url, token_file, count):
    with open(token_file) as file:
        token = file.read().strip()
    address = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    def call(method, path, body=None):
        connection.request(method, path, body and json.dumps(body), headers)
        response = connection.getresponse()
        answer = response.read()
        if response.status != 200:
            sys.exit(f"seed: {method} {path} answered {response.status}: {answer[:300]!r}")
        return json.loads(answer)

    root = call("POST", "/iam/v2/groups/", {"name": "bench"})["uid"]
    children = [
        call("POST", f"/iam/v2/groups/{root}",
             {"name": f"group-{i:04d}", "description": f"benchmark seed group {i}"})["uid"]
        for i in range(count)
    ]
    reader = call("POST", f"/iam/v2/identities/{root}", {"name": "bench-reader"})["uid"]
    viewer = call("GET", "/iam/v2/roles?name=viewer")["items"][0]["uid"]
    call("POST", f"/iam/v2/roleBindings/{root}", {"identity": reader, "role": viewer})
    json.dump({"root": root, "children": children, "reader": reader}, sys.stdout)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))

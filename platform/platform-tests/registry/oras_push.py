"""Pushes a file as an OCI artifact whose subject is a manifest, with the
oras Python SDK, and lists the repository's tags with it.

Usage: oras_push.py HOST REPO API_TOKEN SUBJECT_DIGEST SUBJECT_SIZE FILE
Prints {"digest": <the artifact's manifest digest>, "tags": [...]}.
"""

import json
import os
import sys

import oras.oci
import oras.provider


def main():
    host, repo, token, subject_digest, subject_size, path = sys.argv[1:7]
    registry = oras.provider.Registry(hostname=host, insecure=True)
    # The API token as Basic auth's password, as credential helpers hand it
    # out; the SDK trades it at the token endpoint the challenge names.
    registry.auth.set_basic_auth("token", token)
    subject = oras.oci.Subject(
        mediaType="application/vnd.oci.image.manifest.v1+json",
        digest=subject_digest,
        size=int(subject_size),
    )
    os.chdir(os.path.dirname(path))
    response = registry.push(
        target=f"{host}/{repo}:sbom",
        files=[f"{os.path.basename(path)}:application/vnd.example.sbom.layer"],
        manifest_config=f"{os.devnull}:application/vnd.example.sbom",
        manifest_annotations={"org.example.tool": "oras-py"},
        subject=subject,
        quiet=True,
    )
    response.raise_for_status()
    digest = response.headers["Docker-Content-Digest"]
    tags = registry.get_tags(f"{host}/{repo}")
    print(json.dumps({"digest": digest, "tags": tags}))


if __name__ == "__main__":
    main()

#!/usr/bin/env bash
# Builds the grpc-gateway peer of scripts/bench.sh from Debian packages alone:
#
#   OUT_DIR/grpc-gateway     REST proxy of proto/groups.proto (-listen, -backend ADDR)
#   OUT_DIR/groups-backend   that service over gRPC from memory (-listen, -groups N)
#
#   bash platform/platform-server/bench/gateway/build.sh OUT_DIR
#
# Installs the Debian packages it needs when missing (../apt-ensure.sh),
# generates the Go code with protoc 3.21, protoc-gen-go 1.3 and
# protoc-gen-grpc-gateway 1.6.4, and builds in GOPATH mode (GO111MODULE=off)
# against /usr/share/gocode. The Go build cache makes rebuilds fast.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out_dir=${1:?usage: $0 OUT_DIR}
mkdir -p "$out_dir"
out_dir=$(cd "$out_dir" && pwd)

bash "$here/../apt-ensure.sh" golang-go protobuf-compiler golang-goprotobuf-dev \
  golang-github-golang-protobuf-1-3-dev protoc-gen-go-1-3 golang-google-grpc-dev \
  golang-google-genproto-dev golang-grpc-gateway golang-github-grpc-ecosystem-grpc-gateway-dev

# A GOPATH of its own: src/platformbench/{groupspb,gateway,backend}.
gopath="$out_dir/gopath"
src="$gopath/src/platformbench"
rm -rf "$src"
mkdir -p "$src/groupspb"
cp -r "$here/gateway" "$here/backend" "$src/"
# google/api/*.proto are the ones vendored with the generator. protoc 3.21's
# timestamp.proto names the APIv2 Go package; map it back to the APIv1 one the
# 1.3 generator and grpc-gateway 1.6 use.
protoc -I "$here/proto" -I "$here/../../../../crates/protoapi-codegen/proto" \
  --go_out="Mgoogle/protobuf/timestamp.proto=github.com/golang/protobuf/ptypes/timestamp,plugins=grpc:$gopath/src" \
  --grpc-gateway_out="Mgoogle/protobuf/timestamp.proto=github.com/golang/protobuf/ptypes/timestamp:$gopath/src" \
  "$here/proto/groups.proto"

echo "== go build (GOPATH mode) into $out_dir" >&2
export GO111MODULE=off GOPATH="$gopath:/usr/share/gocode" GOFLAGS=
go build -o "$out_dir/grpc-gateway" platformbench/gateway
go build -o "$out_dir/groups-backend" platformbench/backend

// Command grpc-gateway is the grpc-gateway REST proxy of the groups service
// subset (../proto/groups.proto): REST/JSON in, gRPC to -backend, which may be
// the in-memory backend (../backend) or the platform server itself. It
// forwards the Authorization header as gRPC metadata (grpc-gateway's default).
package main

import (
	"context"
	"flag"
	"log"
	"net"
	"net/http"

	"github.com/grpc-ecosystem/grpc-gateway/runtime"
	"google.golang.org/grpc"

	"platformbench/groupspb"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to serve REST on")
	backend := flag.String("backend", "", "gRPC address (host:port) of the groups service")
	flag.Parse()
	if *backend == "" {
		log.Fatal("-backend is required")
	}

	// Canonical proto3 JSON as the platform server writes it: lowerCamelCase
	// names (OrigName false) and every scalar, zero values included. (jsonpb
	// 1.3 then also writes unset messages as null, which the platform server
	// leaves out: `"resourceLimits":null`, 22 bytes more per group.)
	mux := runtime.NewServeMux(runtime.WithMarshalerOption(runtime.MIMEWildcard,
		&runtime.JSONPb{OrigName: false, EmitDefaults: true}))
	err := groupspb.RegisterGroupServiceHandlerFromEndpoint(context.Background(), mux, *backend,
		[]grpc.DialOption{grpc.WithInsecure()})
	if err != nil {
		log.Fatal(err)
	}
	listener, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("listening address=%s backend=%s", listener.Addr(), *backend)
	log.Fatal(http.Serve(listener, mux))
}

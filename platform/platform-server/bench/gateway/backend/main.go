// Command groups-backend serves the groups service subset
// (../proto/groups.proto) over gRPC from memory, without authentication: the
// peer stack's backend behind grpc-gateway. It holds one root group with
// -groups children, named and described like the benchmark's seed groups,
// and pages them in uid order with the last uid as the page token.
package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"flag"
	"fmt"
	"log"
	"net"
	"sort"
	"time"

	"github.com/golang/protobuf/ptypes/timestamp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"platformbench/groupspb"
)

const defaultPageSize, maxPageSize = 50, 200

type server struct {
	groupspb.UnimplementedGroupServiceServer
	byUID    map[string]*groupspb.Group
	root     string
	children []*groupspb.Group // of root, sorted by uid
}

// segment is a random lowercase hex uid segment of n characters, as the
// platform server makes them (40 for a root, 16 below).
func segment(n int) string {
	bytes := make([]byte, n/2)
	if _, err := rand.Read(bytes); err != nil {
		log.Fatal(err)
	}
	return hex.EncodeToString(bytes)
}

func newServer(groups int) *server {
	now := time.Now()
	stamp := &timestamp.Timestamp{Seconds: now.Unix(), Nanos: int32(now.Nanosecond() / 1e6 * 1e6)}
	group := func(uid, name, description string) *groupspb.Group {
		return &groupspb.Group{Uid: uid, CreateTime: stamp, UpdateTime: stamp, Name: name,
			Description: description, Etag: segment(22)}
	}
	s := &server{byUID: map[string]*groupspb.Group{}, root: segment(40)}
	s.byUID[s.root] = group(s.root, "bench", "")
	for i := 0; i < groups; i++ {
		child := group(s.root+"/"+segment(16), fmt.Sprintf("group-%04d", i),
			fmt.Sprintf("benchmark seed group %d", i))
		s.byUID[child.Uid] = child
		s.children = append(s.children, child)
	}
	sort.Slice(s.children, func(i, j int) bool { return s.children[i].Uid < s.children[j].Uid })
	return s
}

func (s *server) GetGroup(_ context.Context, request *groupspb.GetGroupRequest) (*groupspb.Group, error) {
	if group, ok := s.byUID[request.Uid]; ok {
		return group, nil
	}
	return nil, status.Errorf(codes.NotFound, "no group %q", request.Uid)
}

func (s *server) ListGroups(_ context.Context, request *groupspb.ListGroupsRequest) (*groupspb.ListGroupsResponse, error) {
	if request.Uidp.GetChildrenOf() != s.root {
		return nil, status.Error(codes.InvalidArgument, "only uidp.children_of=<root> is served")
	}
	size := int(request.PageSize)
	if size <= 0 {
		size = defaultPageSize
	} else if size > maxPageSize {
		size = maxPageSize
	}
	start := 0
	if request.PageToken != "" {
		after, err := base64.RawURLEncoding.DecodeString(request.PageToken)
		if err != nil {
			return nil, status.Error(codes.InvalidArgument, "bad page token")
		}
		start = sort.Search(len(s.children), func(i int) bool { return s.children[i].Uid > string(after) })
	}
	end := start + size
	response := &groupspb.ListGroupsResponse{TotalCount: int32(len(s.children))}
	if end < len(s.children) {
		response.NextPageToken = base64.RawURLEncoding.EncodeToString([]byte(s.children[end-1].Uid))
	} else {
		end = len(s.children)
	}
	response.Items = s.children[start:end]
	return response, nil
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to serve gRPC on")
	groups := flag.Int("groups", 1000, "children of the root group")
	flag.Parse()
	s := newServer(*groups)
	listener, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	grpcServer := grpc.NewServer()
	groupspb.RegisterGroupServiceServer(grpcServer, s)
	// The script reads the root and a child from here.
	log.Printf("listening address=%s root=%s child=%s", listener.Addr(), s.root, s.children[0].Uid)
	log.Fatal(grpcServer.Serve(listener))
}

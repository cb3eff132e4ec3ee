// Package nsclient is the client side of namenode-ext's Namespace.LocateBatch and
// DataNodeDirectory.List, shared by the offload reader and datanode-ext: many files located
// in few calls, and the datanode-ext endpoints of the live DataNodes, checked before anyone
// dials them.
package nsclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// ErrBadAnswer: namenode-ext answered something that cannot be right.
var ErrBadAnswer = errors.New("namenode-ext: bad answer")

// MaxBatch is the most paths one LocateBatch call takes (namenode-ext's limit).
const MaxBatch = 1024

// MaxEndpoints bounds what List accepts (far above any cluster's DataNode count).
const MaxEndpoints = 1 << 16

// LocateMany returns the blocks of every path, in order, located as user (with block tokens
// issued to user) through namenode-ext's LocateBatch, MaxBatch paths per call and following
// the server's early stops. A namenode-ext without LocateBatch is asked file by file with
// Locate. The first failing file fails the call with namenode-ext's status.
func LocateMany(ctx context.Context, c pb.NamespaceClient, user string, paths []string) ([]*pb.LocatedBlocks, error) {
	out := make([]*pb.LocatedBlocks, 0, len(paths))
	for len(out) < len(paths) {
		rest := paths[len(out):]
		resp, err := c.LocateBatch(ctx, &pb.LocateBatchRequest{User: user, Paths: rest[:min(len(rest), MaxBatch)]})
		if status.Code(err) == codes.Unimplemented {
			for _, p := range rest {
				lb, err := c.Locate(ctx, &pb.LocateRequest{User: user, Path: p})
				if err != nil {
					return nil, err
				}
				out = append(out, lb)
			}
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		got := resp.GetFiles()
		if len(got) == 0 || len(got) > min(len(rest), MaxBatch) {
			return nil, fmt.Errorf("%w: LocateBatch answered %d files for %d paths", ErrBadAnswer, len(got), min(len(rest), MaxBatch))
		}
		out = append(out, got...)
	}
	return out, nil
}

// Endpoint is one datanode-ext as namenode-ext's directory lists it.
type Endpoint struct {
	// UUID is its DataNode's.
	UUID string
	// Addr is the host:port to dial (the DataNode's IP and the registered port).
	Addr string
	// Hostname is the DataNode's host name: the TLS server name and the _HOST of the API's
	// Kerberos service principal.
	Hostname string
	// XferAddr is the DataNode's data transfer address.
	XferAddr string
	// TLS: the API serves TLS.
	TLS bool
}

// List returns the datanode-ext endpoints namenode-ext's directory lists, as user. Entries
// that are not a DataNode UUID with a host:port are dropped, and so are repeated UUIDs.
func List(ctx context.Context, c pb.DataNodeDirectoryClient, user string) ([]Endpoint, error) {
	resp, err := c.List(ctx, &pb.ListDataNodeExtsRequest{User: user})
	if err != nil {
		return nil, err
	}
	if len(resp.GetNodes()) > MaxEndpoints {
		return nil, fmt.Errorf("%w: %d datanode-ext endpoints", ErrBadAnswer, len(resp.GetNodes()))
	}
	seen := map[string]bool{}
	out := make([]Endpoint, 0, len(resp.GetNodes()))
	for _, n := range resp.GetNodes() {
		if !ValidAddr(n.GetApiAddress()) || n.GetDatanodeUuid() == "" || len(n.GetDatanodeUuid()) > 128 || seen[n.GetDatanodeUuid()] {
			continue
		}
		seen[n.GetDatanodeUuid()] = true
		out = append(out, Endpoint{UUID: n.GetDatanodeUuid(), Addr: n.GetApiAddress(), Hostname: n.GetHostname(),
			XferAddr: n.GetXferAddr(), TLS: n.GetTls()})
	}
	return out, nil
}

// ValidAddr reports whether a is host:port with a port in 1..65535.
func ValidAddr(a string) bool {
	h, p, err := net.SplitHostPort(a)
	if err != nil || h == "" {
		return false
	}
	n, err := strconv.Atoi(p)
	return err == nil && n > 0 && n <= 65535
}

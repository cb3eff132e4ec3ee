package offload

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"

	"github.com/newtricks/newtricks/internal/apiclient"
	"github.com/newtricks/newtricks/internal/nsclient"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// NameNodeExt is datanode-ext's client of namenode-ext's public API
// (newtricks.datanode.ext.namenode.api): it locates a session's files as the session's user
// (Namespace), says where other DataNodes' datanode-ext listen (Directory, from
// namenode-ext's DataNodeDirectory) and registers this node there. With several addresses
// (a NameNode pair) each call goes to the one that answered last and fails over as every
// client does (apiclient.Failover: a standby's answer, an unreachable address, a broken
// connection for these read-only calls); a registration goes to every one of them, so the
// namenode-ext that becomes active already knows this node.
type NameNodeExt struct {
	addrs []string
	fo    *apiclient.Failover
	// self is the user datanode-ext names when it calls for itself (List, Register): under
	// simple authentication its OS user; with a proven identity it may be empty.
	self string
	log  hclog.Logger
	// Refresh is how old the directory listing may get before it is asked again (default
	// 5 s); an unknown UUID asks again at most every MinRefresh (default 1 s).
	Refresh, MinRefresh time.Duration
	now                 func() time.Time

	mu        sync.Mutex
	good      int
	eps       map[string]Endpoint
	listedAt  time.Time
	listTried time.Time
	listing   sync.Mutex
}

// NewNameNodeExt returns a client of the namenode-ext addresses; options gives each address's
// transport security and credentials.
func NewNameNodeExt(addrs []string, options func(addr string) ([]grpc.DialOption, error), self string, log hclog.Logger) (*NameNodeExt, error) {
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%w: no namenode-ext address", ErrInvalid)
	}
	if log == nil {
		log = hclog.NewNullLogger()
	}
	n := &NameNodeExt{addrs: addrs, self: self, log: log, Refresh: 5 * time.Second, MinRefresh: time.Second, now: time.Now, eps: map[string]Endpoint{}}
	fo, err := apiclient.DialEach(addrs, func(a string) ([]grpc.DialOption, error) {
		opts, err := options(a)
		if err != nil {
			return nil, err
		}
		return append(opts, grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20))), nil
	})
	if errors.Is(err, apiclient.ErrBadAddress) {
		return nil, fmt.Errorf("%w: namenode-ext: %v", ErrInvalid, err)
	}
	if err != nil {
		return nil, err
	}
	n.fo = fo.WithPolicy(Failover)
	return n, nil
}

// Failover is how datanode-ext's calls move between namenode-ext addresses: shorter than a
// trainer's (apiclient.DefaultPolicy), about 8 s over all attempts, since a session open or a
// directory refresh waits on it and the reader retries a failed open itself.
var Failover = apiclient.Policy{MaxAttempts: 8, Base: 250 * time.Millisecond, Max: 2 * time.Second}

// Close closes the connections.
func (n *NameNodeExt) Close() {
	if n.fo != nil {
		n.fo.Close()
	}
}

// Locate implements Namespace: the files' blocks with tokens issued to user, located by the
// NameNode as user (namenode-ext's ActAs: under Kerberos only where Hadoop's proxy-user rules
// let datanode-ext's principal act as user).
func (n *NameNodeExt) Locate(ctx context.Context, user string, paths []string) ([]*pb.LocatedBlocks, error) {
	out, err := nsclient.LocateMany(ctx, pb.NewNamespaceClient(n.fo), user, paths)
	if err != nil {
		return nil, fmt.Errorf("namenode-ext: %w", fromStatus(err))
	}
	return out, nil
}

// Lookup implements Directory from a listing at most Refresh old; a UUID it does not hold
// asks again, at most every MinRefresh.
func (n *NameNodeExt) Lookup(ctx context.Context, uuid string) (Endpoint, bool) {
	n.mu.Lock()
	ep, ok := n.eps[uuid]
	at, tried := n.listedAt, n.listTried
	n.mu.Unlock()
	now := n.now()
	if now.Sub(at) < n.Refresh && (ok || now.Sub(tried) < n.MinRefresh) {
		return ep, ok
	}
	n.refresh(ctx, tried)
	n.mu.Lock()
	defer n.mu.Unlock()
	ep, ok = n.eps[uuid]
	return ep, ok
}

// refresh lists the directory again unless another call did since tried.
func (n *NameNodeExt) refresh(ctx context.Context, tried time.Time) {
	n.listing.Lock()
	defer n.listing.Unlock()
	n.mu.Lock()
	if n.listTried.After(tried) {
		n.mu.Unlock()
		return
	}
	n.listTried = n.now()
	n.mu.Unlock()
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	eps, err := nsclient.List(lctx, pb.NewDataNodeDirectoryClient(n.fo), n.self)
	if err != nil {
		n.log.Warn("cannot list the datanode-ext directory; peers stay as last listed", "error", err)
		return
	}
	m := make(map[string]Endpoint, len(eps))
	for _, e := range eps {
		m[e.UUID] = Endpoint{UUID: e.UUID, Addr: e.Addr, Hostname: e.Hostname, TLS: e.TLS}
	}
	n.mu.Lock()
	n.eps, n.listedAt = m, n.now()
	n.mu.Unlock()
}

// Register registers this DataNode's datanode-ext (its API port, and whether it serves TLS)
// with every namenode-ext, and returns how soon to do it again.
func (n *NameNodeExt) Register(ctx context.Context, uuid string, port int, tls bool) (time.Duration, error) {
	var renew time.Duration
	var first error
	ok := 0
	for i, cc := range n.fo.Each() {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		resp, err := pb.NewDataNodeDirectoryClient(cc).Register(rctx, &pb.RegisterDataNodeExtRequest{
			User: n.self, DatanodeUuid: uuid, ApiPort: uint32(port), Tls: tls})
		cancel()
		if err != nil {
			if first == nil {
				first = fmt.Errorf("namenode-ext %s: %w", n.addrs[i], err)
			}
			continue
		}
		ok++
		if r := time.Duration(resp.GetRenewMs()) * time.Millisecond; r >= 500*time.Millisecond && (renew == 0 || r < renew) {
			renew = r
		}
	}
	if ok == 0 {
		return time.Second, first
	}
	if first != nil {
		n.log.Debug("registered with some namenode-ext only", "error", first)
	}
	if renew == 0 {
		renew = 5 * time.Second
	}
	return renew, nil
}

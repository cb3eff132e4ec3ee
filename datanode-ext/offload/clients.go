package offload

import (
	"container/list"
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/newtricks/newtricks/internal/apiclient"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// GRPCHost adapts a DataNodeHost client.
type GRPCHost struct{ Client pb.DataNodeHostClient }

// ResolveReplica implements Host.
func (h GRPCHost) ResolveReplica(ctx context.Context, user string, b *pb.LocatedBlock) (string, int64, error) {
	if b.GetToken() == nil || len(b.GetToken().GetIdentifier()) == 0 {
		return "", 0, fmt.Errorf("%w: block %d: a block access token is required", ErrPermission, b.GetBlockId())
	}
	rep, err := h.Client.ResolveReplica(ctx, &pb.ResolveReplicaRequest{
		BlockPoolId: b.GetBlockPoolId(), BlockId: b.GetBlockId(), GenStamp: b.GetGenStamp(),
		User: user, Token: b.GetToken(),
	})
	if err != nil {
		return "", 0, fmt.Errorf("block %d: %w", b.GetBlockId(), fromStatus(err))
	}
	return rep.GetBlockPath(), rep.GetNumBytes(), nil
}

// DialOptions returns how to reach one endpoint: its transport security and per-call
// credentials (TLS and Kerberos on a secure cluster). nil options: plaintext.
type DialOptions func(ep Endpoint) ([]grpc.DialOption, error)

// Defaults of GRPCPeers' connection cache.
const (
	DefaultPeerConns = 64
	DefaultPeerIdle  = 2 * time.Minute
)

// GRPCPeers reads ranges from other datanode-ext nodes through their Offload.ReadRange, at
// the endpoints the Directory listed. Its connections are a bounded cache: at most Max kept
// (least recently used and unused ones closed first), each closed after Idle without a call.
// What a peer's failure says is kept on this node (logged): the caller gets the DataNode's
// UUID and a code, never an address or a connection error.
type GRPCPeers struct {
	// Options give each peer's transport security and credentials (nil: plaintext).
	Options DialOptions
	// Max connections kept (DefaultPeerConns when 0); Idle closes a connection not used
	// for that long (DefaultPeerIdle when 0).
	Max  int
	Idle time.Duration
	Log  hclog.Logger

	mu    sync.Mutex
	conns map[string]*peerConn
	lru   list.List // of *peerConn, most recently used first
	now   func() time.Time
}

type peerConn struct {
	key  string
	cc   *grpc.ClientConn
	refs int
	last time.Time
	el   *list.Element
}

// NewGRPCPeers returns an empty connection cache with the default bounds, dialing plaintext.
func NewGRPCPeers() *GRPCPeers { return &GRPCPeers{} }

func (p *GRPCPeers) init() {
	if p.conns == nil {
		p.conns = map[string]*peerConn{}
		if p.now == nil {
			p.now = time.Now
		}
		if p.Max <= 0 {
			p.Max = DefaultPeerConns
		}
		if p.Idle <= 0 {
			p.Idle = DefaultPeerIdle
		}
		if p.Log == nil {
			p.Log = hclog.NewNullLogger()
		}
	}
}

// conn returns a held connection to ep (release it with done).
func (p *GRPCPeers) conn(ep Endpoint) (*peerConn, error) {
	key := ep.Addr + "|" + ep.Hostname + "|" + strconv.FormatBool(ep.TLS)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.init()
	now := p.now()
	pc, ok := p.conns[key]
	if !ok {
		opts := []grpc.DialOption{grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxRangeBytes + 1<<20)), grpc.WithIdleTimeout(p.Idle), apiclient.Reconnect()}
		if p.Options != nil {
			o, err := p.Options(ep)
			if err != nil {
				return nil, err
			}
			opts = append(opts, o...)
		} else {
			opts = append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))
		}
		cc, err := grpc.NewClient(ep.Addr, opts...)
		if err != nil {
			return nil, err
		}
		pc = &peerConn{key: key, cc: cc}
		pc.el = p.lru.PushFront(pc)
		p.conns[key] = pc
	} else {
		p.lru.MoveToFront(pc.el)
	}
	pc.refs++
	pc.last = now
	p.evictLocked(now)
	return pc, nil
}

// evictLocked closes unused connections beyond Max, and unused ones idle for Idle.
func (p *GRPCPeers) evictLocked(now time.Time) {
	for el := p.lru.Back(); el != nil; {
		pc := el.Value.(*peerConn)
		prev := el.Prev()
		if pc.refs == 0 && (len(p.conns) > p.Max || now.Sub(pc.last) > p.Idle) {
			p.lru.Remove(el)
			delete(p.conns, pc.key)
			pc.cc.Close()
		}
		el = prev
	}
}

func (p *GRPCPeers) done(pc *peerConn) {
	p.mu.Lock()
	pc.refs--
	pc.last = p.now()
	p.evictLocked(pc.last)
	p.mu.Unlock()
}

// Len is the number of connections kept.
func (p *GRPCPeers) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// Close closes every connection.
func (p *GRPCPeers) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pc := range p.conns {
		pc.cc.Close()
	}
	p.conns = nil
	p.lru.Init()
}

// ReadRange implements Peers.
func (p *GRPCPeers) ReadRange(ctx context.Context, ep Endpoint, user string, b *pb.LocatedBlock, off, n int64) ([]byte, error) {
	pc, err := p.conn(ep)
	if err != nil {
		p.logFailure(ep, b, err)
		return nil, fmt.Errorf("%w: DataNode %s: block %d: cannot connect", ErrUnavailable, ep.UUID, b.GetBlockId())
	}
	defer p.done(pc)
	resp, err := pb.NewOffloadClient(pc.cc).ReadRange(ctx, &pb.ReadRangeRequest{User: user, Block: b, Offset: off, Length: n})
	if err != nil {
		return nil, p.peerError(ep, b, err)
	}
	if int64(len(resp.GetData())) != n {
		return nil, fmt.Errorf("%w: DataNode %s returned %d bytes of %d", ErrUnavailable, ep.UUID, len(resp.GetData()), n)
	}
	return resp.GetData(), nil
}

// peerError is what a caller learns of a peer's failure: the peer's own refusals (the
// DataNode's token check, a bad range) keep their code and the peer's message; anything else
// (the connection, a timeout, a crash, a busy peer's RESOURCE_EXHAUSTED) becomes UNAVAILABLE
// naming only the DataNode, so that another holder is tried and the reader reads the sample
// itself, and the details go to this node's log.
func (p *GRPCPeers) peerError(ep Endpoint, b *pb.LocatedBlock, err error) error {
	switch status.Code(err) {
	case codes.PermissionDenied, codes.InvalidArgument, codes.NotFound, codes.FailedPrecondition:
		return fmt.Errorf("DataNode %s: block %d: %w", ep.UUID, b.GetBlockId(), fromStatus(err))
	}
	p.logFailure(ep, b, err)
	return fmt.Errorf("%w: DataNode %s did not serve block %d", ErrUnavailable, ep.UUID, b.GetBlockId())
}

func (p *GRPCPeers) logFailure(ep Endpoint, b *pb.LocatedBlock, err error) {
	p.mu.Lock()
	p.init()
	log := p.Log
	p.mu.Unlock()
	log.Debug("peer read failed", "datanode", ep.UUID, "address", ep.Addr, "block", b.GetBlockId(), "error", err)
}

package offload

import (
	"context"
	"fmt"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

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

// GRPCPeers reads ranges from other datanode-ext nodes through their Offload.ReadRange,
// keeping one connection per address.
type GRPCPeers struct {
	mu    sync.Mutex
	conns map[string]*grpc.ClientConn
}

// NewGRPCPeers returns an empty connection cache.
func NewGRPCPeers() *GRPCPeers { return &GRPCPeers{conns: map[string]*grpc.ClientConn{}} }

// ReadRange implements Peers.
func (p *GRPCPeers) ReadRange(ctx context.Context, addr, user string, b *pb.LocatedBlock, off, n int64) ([]byte, error) {
	p.mu.Lock()
	cc, ok := p.conns[addr]
	if !ok {
		var err error
		cc, err = grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxRangeBytes+1<<20)))
		if err != nil {
			p.mu.Unlock()
			return nil, fmt.Errorf("%w: dial peer %s: %v", ErrUnavailable, addr, err)
		}
		p.conns[addr] = cc
	}
	p.mu.Unlock()
	resp, err := pb.NewOffloadClient(cc).ReadRange(ctx, &pb.ReadRangeRequest{User: user, Block: b, Offset: off, Length: n})
	if err != nil {
		return nil, fmt.Errorf("peer %s: block %d: %w", addr, b.GetBlockId(), fromStatus(err))
	}
	if int64(len(resp.GetData())) != n {
		return nil, fmt.Errorf("%w: peer %s returned %d bytes of %d", ErrUnavailable, addr, len(resp.GetData()), n)
	}
	return resp.GetData(), nil
}

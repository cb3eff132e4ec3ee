package offload

import (
	"context"
	"fmt"

	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// Resolve implements Host: the DataNode verifies the block token for user, then names the
// replica's data and checksum files, its visible length, generation stamp and state.
func (h GRPCHost) Resolve(ctx context.Context, user string, b *pb.LocatedBlock) (Replica, error) {
	if b.GetToken() == nil || len(b.GetToken().GetIdentifier()) == 0 {
		return Replica{}, fmt.Errorf("%w: block %d: a block access token is required", ErrPermission, b.GetBlockId())
	}
	rep, err := h.Client.ResolveReplica(ctx, &pb.ResolveReplicaRequest{
		BlockPoolId: b.GetBlockPoolId(), BlockId: b.GetBlockId(), GenStamp: b.GetGenStamp(),
		User: user, Token: b.GetToken(),
	})
	if err != nil {
		return Replica{}, fmt.Errorf("block %d: %w", b.GetBlockId(), fromStatus(err))
	}
	return Replica{Path: rep.GetBlockPath(), MetaPath: rep.GetMetaPath(), NumBytes: rep.GetNumBytes(),
		GenStamp: rep.GetGenStamp(), Finalized: rep.GetFinalized()}, nil
}

// ReportBadBlock implements Host (DataNodeHost.ReportBadBlock).
func (h GRPCHost) ReportBadBlock(ctx context.Context, b *pb.LocatedBlock, genStamp int64, reason string) error {
	_, err := h.Client.ReportBadBlock(ctx, &pb.ReportBadBlockRequest{BlockPoolId: b.GetBlockPoolId(), BlockId: b.GetBlockId(),
		GenStamp: genStamp, Reason: reason})
	if err != nil {
		return fmt.Errorf("report bad block %d: %w", b.GetBlockId(), fromStatus(err))
	}
	return nil
}

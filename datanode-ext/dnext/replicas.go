package dnext

import (
	"context"
	"errors"
	"fmt"

	"github.com/newtricks/newtricks/datanode-ext/offload"
	"github.com/newtricks/newtricks/internal/authn"
	"github.com/newtricks/newtricks/internal/coproc"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// replicasAPI implements the public Replicas service.
type replicasAPI struct {
	pb.UnimplementedReplicasServer
	host offload.Host
	// reads reads and verifies the replica's bytes (offload's raw-read pool and corrupt
	// replica reports).
	reads interface {
		ReadReplica(ctx context.Context, rep offload.Replica, b *pb.LocatedBlock, off, n int64) ([]byte, error)
	}
	cfg  Config
	uuid func() string
}

// Read resolves a block to the local replica. The DataNode checks the token for the user; we
// never look at the disk before it said yes. The answer never names the replica's file
// (ReadReplicaResponse.path stays empty): no caller of this public API reads it, and it would
// tell any caller where the DataNode keeps its data. The bytes, if asked for, are verified
// against the block's checksums first.
func (a *replicasAPI) Read(ctx context.Context, req *pb.ReadReplicaRequest) (*pb.ReadReplicaResponse, error) {
	b := req.GetBlock()
	user, err := authn.ActAs(ctx, req.GetUser())
	if err != nil {
		return nil, coproc.ToStatus(err)
	}
	switch {
	case b == nil || b.GetBlockId() == 0 || b.GetBlockPoolId() == "":
		return nil, coproc.ToStatus(fmt.Errorf("%w: block pool id and block id are required", coproc.ErrInvalid))
	case b.GetToken() == nil || len(b.GetToken().GetIdentifier()) == 0:
		return nil, coproc.ToStatus(fmt.Errorf("%w: block %d: a block access token is required", coproc.ErrPermission, b.GetBlockId()))
	}
	rep, err := a.host.Resolve(ctx, user, b)
	if err != nil {
		return nil, coproc.ToStatus(err)
	}
	resp := &pb.ReadReplicaResponse{NumBytes: rep.NumBytes, DatanodeUuid: a.uuid()}
	if !req.GetIncludeData() {
		return resp, nil
	}
	if rep.NumBytes > a.cfg.MaxReadBytes {
		return nil, coproc.ToStatus(fmt.Errorf("%w: block %d has %d bytes, more than %s.read.max.bytes=%d",
			coproc.ErrResourceLimit, b.GetBlockId(), rep.NumBytes, Prefix, a.cfg.MaxReadBytes))
	}
	data, err := a.reads.ReadReplica(ctx, rep, b, 0, rep.NumBytes)
	if err != nil {
		if errors.Is(err, offload.ErrUnavailable) {
			err = fmt.Errorf("%w (read another replica)", err)
		}
		return nil, coproc.ToStatus(err)
	}
	resp.Data = data
	return resp, nil
}

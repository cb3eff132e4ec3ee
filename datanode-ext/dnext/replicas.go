package dnext

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/newtricks/newtricks/internal/authn"
	"github.com/newtricks/newtricks/internal/coproc"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// replicasAPI implements the public Replicas service.
type replicasAPI struct {
	pb.UnimplementedReplicasServer
	host pb.DataNodeHostClient
	cfg  Config
	uuid func() string
}

// Read resolves a block to the local replica. The DataNode checks the token for the user; we
// never look at the disk before it said yes.
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
	rep, err := a.host.ResolveReplica(ctx, &pb.ResolveReplicaRequest{
		BlockPoolId: b.GetBlockPoolId(), BlockId: b.GetBlockId(), GenStamp: b.GetGenStamp(),
		User: user, Token: b.GetToken(),
	})
	if err != nil {
		return nil, coproc.ToStatus(fmt.Errorf("block %d: %w", b.GetBlockId(), err))
	}
	resp := &pb.ReadReplicaResponse{Path: rep.GetBlockPath(), NumBytes: rep.GetNumBytes(), DatanodeUuid: a.uuid()}
	if !req.GetIncludeData() {
		return resp, nil
	}
	if rep.GetNumBytes() > a.cfg.MaxReadBytes {
		return nil, coproc.ToStatus(fmt.Errorf("%w: block %d has %d bytes, more than %s.read.max.bytes=%d",
			coproc.ErrResourceLimit, b.GetBlockId(), rep.GetNumBytes(), Prefix, a.cfg.MaxReadBytes))
	}
	data, err := readExactly(rep.GetBlockPath(), rep.GetNumBytes())
	if err != nil {
		return nil, coproc.ToStatus(fmt.Errorf("block %d: %w", b.GetBlockId(), err))
	}
	resp.Data = data
	return resp, nil
}

// readExactly reads the first n bytes of a replica file: a finalized replica file holds
// exactly the block's bytes, but a replica being appended to may hold more.
func readExactly(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: open replica: %v", coproc.ErrUnavailable, err)
	}
	defer f.Close()
	buf := make([]byte, n)
	if _, err := io.ReadFull(f, buf); err != nil {
		return nil, fmt.Errorf("%w: read replica %s: %v", coproc.ErrUnavailable, path, err)
	}
	return buf, nil
}

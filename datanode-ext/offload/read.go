package offload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/newtricks/newtricks/dataset"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// Host is the DataNode's token-checked access to its replicas (the hook's DataNodeHost):
// it verifies the block access token for the user before it reveals the replica's file.
type Host interface {
	ResolveReplica(ctx context.Context, user string, b *pb.LocatedBlock) (path string, numBytes int64, err error)
}

// Peers reads a range of a block from another member's DataNode (its Offload.ReadRange).
type Peers interface {
	ReadRange(ctx context.Context, apiAddr, user string, b *pb.LocatedBlock, off, n int64) ([]byte, error)
}

// MaxRangeBytes bounds one ReadRange.
const MaxRangeBytes = 16 << 20

// ReadLocal reads [off, off+n) of a block from this DataNode's replica after the DataNode
// verified the token for user.
func ReadLocal(ctx context.Context, h Host, user string, b *pb.LocatedBlock, off, n int64) ([]byte, error) {
	p, size, err := h.ResolveReplica(ctx, user, b)
	if err != nil {
		return nil, err
	}
	return readFile(p, size, b.GetBlockId(), off, n)
}

// readFile reads [off, off+n) of the replica file p of a block of size bytes, as the DataNode
// resolved it: the range is checked against the block's size, not the file's (a replica being
// appended to may hold more).
func readFile(p string, size, blockID, off, n int64) ([]byte, error) {
	if off < 0 || n < 0 || off+n > size {
		return nil, fmt.Errorf("%w: range [%d, +%d) outside block %d of %d bytes", ErrInvalid, off, n, blockID, size)
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("%w: block %d: open replica: %v", ErrUnavailable, blockID, err)
	}
	defer f.Close()
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, off); err != nil && !(errors.Is(err, io.EOF) && n == 0) {
		return nil, fmt.Errorf("%w: block %d: read replica: %v", ErrUnavailable, blockID, err)
	}
	return buf, nil
}

// reader reads byte ranges of a session's files: local pieces from the replica files the
// DataNode resolved for the session's user (each block resolved once per session), remote
// pieces from a member that holds them.
type reader struct {
	host    Host
	peers   Peers
	user    string
	self    string                 // this DataNode's UUID
	members map[string]string      // UUID -> API address
	counted func(n int, err error) // told about every read from a peer (may be nil)

	mu    sync.Mutex
	paths map[int64]resolved
}

// resolved is a replica file the DataNode revealed for the session's user, and the block's size.
type resolved struct {
	path string
	size int64
}

// read returns [off, off+n) of a file of the session, piece by piece (dataset.Pieces).
func (r *reader) read(ctx context.Context, lb *pb.LocatedBlocks, off, n int64) ([]byte, error) {
	ps, err := dataset.Pieces(lb, off, n)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, n)
	for _, p := range ps {
		b, err := r.piece(ctx, p)
		if err != nil {
			return nil, err
		}
		out = append(out, b...)
	}
	return out, nil
}

// piece reads one block's part of a range: from the local replica when this node holds the
// block, else from the first member that holds it and answers (a refusal of the user's token
// is final: another replica's DataNode would refuse it too).
func (r *reader) piece(ctx context.Context, p dataset.Piece) ([]byte, error) {
	b := p.Block
	local := false
	var peers []string
	for _, loc := range b.GetLocations() {
		if loc.GetUuid() == r.self {
			local = true
		} else if addr, ok := r.members[loc.GetUuid()]; ok {
			peers = append(peers, addr)
		}
	}
	if local {
		r.mu.Lock()
		rs, ok := r.paths[b.GetBlockId()]
		r.mu.Unlock()
		if !ok {
			p, size, err := r.host.ResolveReplica(ctx, r.user, b)
			if err != nil {
				return nil, err
			}
			rs = resolved{p, size}
			r.mu.Lock()
			r.paths[b.GetBlockId()] = rs
			r.mu.Unlock()
		}
		return readFile(rs.path, rs.size, b.GetBlockId(), p.Offset, p.Length)
	}
	var last error = fmt.Errorf("%w: block %d is on no member of the session", ErrUnavailable, b.GetBlockId())
	for _, addr := range peers {
		data, err := r.peers.ReadRange(ctx, addr, r.user, b, p.Offset, p.Length)
		if r.counted != nil {
			r.counted(len(data), err)
		}
		if err == nil {
			return data, nil
		}
		last = err
		if errors.Is(err, ErrPermission) {
			break
		}
	}
	return nil, last
}

// ReadRange serves a peer (or a reader) one range of a local replica, after the DataNode
// verified the token for the user.
func (m *Manager) ReadRange(ctx context.Context, user string, b *pb.LocatedBlock, off, n int64) ([]byte, error) {
	if b == nil || b.GetBlockId() == 0 || b.GetBlockPoolId() == "" {
		return nil, fmt.Errorf("%w: block pool id and block id are required", ErrInvalid)
	}
	if n < 0 || n > MaxRangeBytes || off < 0 {
		return nil, fmt.Errorf("%w: range [%d, +%d): length must be in [0, %d]", ErrInvalid, off, n, MaxRangeBytes)
	}
	data, err := ReadLocal(ctx, m.host, user, b, off, n)
	if err == nil {
		m.mu.Lock()
		m.ctr.RangesServed++
		m.ctr.RangeBytesServed += int64(len(data))
		m.mu.Unlock()
	}
	return data, err
}

// peerRead counts one read of a piece from a peer.
func (m *Manager) peerRead(n int, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ctr.PeerReads++
	if err != nil {
		m.ctr.PeerReadErrors++
		return
	}
	m.ctr.PeerReadBytes += int64(n)
}

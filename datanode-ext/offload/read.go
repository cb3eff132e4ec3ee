package offload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/newtricks/newtricks/dataset"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// Host is the DataNode's token-checked access to its replicas (the hook's DataNodeHost):
// it verifies the block access token for the user before it reveals the replica's file.
type Host interface {
	ResolveReplica(ctx context.Context, user string, b *pb.LocatedBlock) (path string, numBytes int64, err error)
}

// Peers reads a range of a block from another DataNode's datanode-ext (its
// Offload.ReadRange), at the endpoint the Directory lists for it.
type Peers interface {
	ReadRange(ctx context.Context, ep Endpoint, user string, b *pb.LocatedBlock, off, n int64) ([]byte, error)
}

// Namespace locates files as a user: their lengths, blocks, replica holders and block access
// tokens issued to that user (namenode-ext's Namespace.LocateBatch, which the NameNode
// answers as the user). A session takes everything about a file's layout from it, never from
// the request.
type Namespace interface {
	Locate(ctx context.Context, user string, paths []string) ([]*pb.LocatedBlocks, error)
}

// Directory says where the datanode-ext of a DataNode listens (namenode-ext's
// DataNodeDirectory): the only source of the addresses a node dials.
type Directory interface {
	Lookup(ctx context.Context, uuid string) (Endpoint, bool)
}

// Endpoint is where one DataNode's datanode-ext listens, as the Directory lists it.
type Endpoint struct {
	UUID string
	// Addr is host:port (the DataNode's IP as the NameNode reports it, and the registered
	// port).
	Addr string
	// Hostname is the DataNode's host name: the TLS server name and the host of its Kerberos
	// service principal.
	Hostname string
	TLS      bool
}

// maxPeerTries bounds how many replica holders one piece is asked of.
const maxPeerTries = 3

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
	dir     Directory
	user    string
	self    string                 // this DataNode's UUID
	counted func(n int, err error) // told about every read from a peer (may be nil)
	log     hclog.Logger

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
// block, else from a replica holder's datanode-ext at the address the Directory lists for it
// (the block's locations come from the NameNode; a holder without a listed datanode-ext is
// skipped). A refusal of the user's token is final: another replica's DataNode would refuse
// it too.
func (r *reader) piece(ctx context.Context, p dataset.Piece) ([]byte, error) {
	b := p.Block
	local := false
	var holders []string
	for _, loc := range b.GetLocations() {
		if loc.GetUuid() == r.self {
			local = true
		} else if loc.GetUuid() != "" {
			holders = append(holders, loc.GetUuid())
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
	var last error = fmt.Errorf("%w: block %d is on no DataNode with a datanode-ext in namenode-ext's directory", ErrUnavailable, b.GetBlockId())
	tries := 0
	for _, uuid := range holders {
		if tries == maxPeerTries || r.dir == nil || r.peers == nil {
			break
		}
		ep, ok := r.dir.Lookup(ctx, uuid)
		if !ok {
			continue
		}
		tries++
		data, err := r.peers.ReadRange(ctx, ep, r.user, b, p.Offset, p.Length)
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

package offload

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/newtricks/newtricks/datanode-ext/replica"
	"github.com/newtricks/newtricks/dataset"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// Replica is a local replica as the DataNode revealed it after it verified the user's block
// token: its data and checksum files, the block's visible length and generation stamp, and
// whether it is finalized (only a finalized replica's checksum failure is corruption).
type Replica struct {
	Path, MetaPath string
	NumBytes       int64
	GenStamp       int64
	Finalized      bool
}

// Host is the DataNode's token-checked access to its replicas (the hook's DataNodeHost):
// it verifies the block access token for the user before it reveals the replica's files, and
// reports a replica that failed its checksums to the NameNode.
type Host interface {
	Resolve(ctx context.Context, user string, b *pb.LocatedBlock) (Replica, error)
	ReportBadBlock(ctx context.Context, b *pb.LocatedBlock, genStamp int64, reason string) error
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

// readReplica reads [off, off+n) of a resolved local replica, verified against its checksum
// file (package replica). A replica that fails them is reported (report, if set) when it is
// finalized; either way the error is ErrUnavailable, so that the caller reads the range from
// another replica, and wraps replica.ErrCorrupt when the replica is bad. A range outside the
// block is ErrInvalid. No error names a local path.
func readReplica(ctx context.Context, rep Replica, b *pb.LocatedBlock, off, n int64, report func(context.Context, *pb.LocatedBlock, Replica, error)) ([]byte, error) {
	f := replica.File{Data: rep.Path, Meta: rep.MetaPath, Size: rep.NumBytes, BlockID: b.GetBlockId()}
	data, err := f.Read(off, n)
	switch {
	case err == nil:
		return data, nil
	case errors.Is(err, replica.ErrRange):
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	case errors.Is(err, replica.ErrCorrupt) && rep.Finalized:
		if report != nil {
			report(ctx, b, rep, err)
		}
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	case errors.Is(err, replica.ErrCorrupt):
		// A replica being written may fail the checksum of its last chunk: not corruption.
		return nil, fmt.Errorf("%w: block %d: replica is not finalized and does not match its checksums yet", ErrUnavailable, b.GetBlockId())
	}
	return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
}

// reader reads byte ranges of a session's files: local pieces from the replica files the
// DataNode resolved for the session's user (each block resolved once per session) and
// verified against their checksums, remote pieces (and local ones whose replica failed) from a
// member that holds them.
type reader struct {
	host    Host
	peers   Peers
	dir     Directory
	user    string
	self    string                 // this DataNode's UUID
	counted func(n int, err error) // told about every read from a peer (may be nil)
	log     hclog.Logger
	// report is told about a local replica that failed its checksums (may be nil).
	report func(context.Context, *pb.LocatedBlock, Replica, error)

	mu    sync.Mutex
	paths map[int64]resolved
	// slots, if set, bound the index reads (the raw pool: an index may be up to
	// dataset.MaxIndexBytes, and opens run concurrently).
	slots func(context.Context) (func(), error)
}

// resolved is a replica the DataNode revealed for the session's user; bad is set once it failed
// its checksums (the session then reads that block from other members only).
type resolved struct {
	rep Replica
	bad bool
}

// newReader returns a reader for a session of user on this node (UUID self), with the node's
// checksum reporting and peer-read counting.
func (m *Manager) newReader(user, self string) *reader {
	return &reader{host: m.host, peers: m.peers, dir: m.dir, user: user, self: self,
		paths: map[int64]resolved{}, counted: m.peerRead, log: m.log, report: m.reportCorrupt,
		slots: func(ctx context.Context) (func(), error) { return m.acquire(ctx, m.rawSlots) }}
}

// read returns [off, off+n) of a file of the session (an index: at most
// dataset.MaxIndexBytes, which the caller checked), in one of the raw-read slots.
func (r *reader) read(ctx context.Context, lb *pb.LocatedBlocks, off, n int64) ([]byte, error) {
	if r.slots != nil {
		release, err := r.slots(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	return r.readMax(ctx, lb, off, n, dataset.MaxIndexBytes, "the index limit")
}

// readMax returns [off, off+n) of a file of the session, piece by piece (dataset.Pieces), if n
// is at most max (limit names it in the error). Nothing is allocated for the claimed length:
// the result grows as the pieces arrive, each bounded by its replica's real length.
func (r *reader) readMax(ctx context.Context, lb *pb.LocatedBlocks, off, n, max int64, limit string) ([]byte, error) {
	if n > max {
		return nil, fmt.Errorf("%w: %d bytes, more than %s (%d)", ErrExhausted, n, limit, max)
	}
	ps, err := dataset.Pieces(lb, off, n)
	if err != nil {
		return nil, err
	}
	if len(ps) == 1 {
		return r.piece(ctx, ps[0])
	}
	var out []byte
	for _, p := range ps {
		b, err := r.piece(ctx, p)
		if err != nil {
			return nil, err
		}
		out = append(out, b...)
	}
	if out == nil {
		out = []byte{}
	}
	return out, nil
}

// piece reads one block's part of a range: from the local replica when this node holds the
// block and its replica passes its checksums, else from a replica holder's datanode-ext at
// the address the Directory lists for it (the block's locations come from the NameNode; a
// holder without a listed datanode-ext is skipped). A refusal of the user's token is final:
// another replica's DataNode would refuse it too.
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
	var last error = fmt.Errorf("%w: block %d is on no DataNode with a datanode-ext in namenode-ext's directory", ErrUnavailable, b.GetBlockId())
	if local {
		r.mu.Lock()
		rs, ok := r.paths[b.GetBlockId()]
		r.mu.Unlock()
		if !ok {
			rep, err := r.host.Resolve(ctx, r.user, b)
			if err != nil {
				return nil, err
			}
			rs = resolved{rep: rep}
			r.mu.Lock()
			r.paths[b.GetBlockId()] = rs
			r.mu.Unlock()
		}
		if rs.bad {
			last = fmt.Errorf("%w: block %d: the local replica failed its checksums and no other member of the session answered", ErrUnavailable, b.GetBlockId())
		} else {
			data, err := readReplica(ctx, rs.rep, b, p.Offset, p.Length, r.report)
			if err == nil || !errors.Is(err, ErrUnavailable) {
				return data, err
			}
			if errors.Is(err, replica.ErrCorrupt) {
				r.mu.Lock()
				r.paths[b.GetBlockId()] = resolved{rep: rs.rep, bad: true}
				r.mu.Unlock()
			}
			last = err
		}
	}
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
// verified the token for the user, verified against the replica's checksums. At most
// Config.MaxReads run at once; more wait (bounded by the caller's deadline).
func (m *Manager) ReadRange(ctx context.Context, user string, b *pb.LocatedBlock, off, n int64) ([]byte, error) {
	if b == nil || b.GetBlockId() == 0 || b.GetBlockPoolId() == "" {
		return nil, fmt.Errorf("%w: block pool id and block id are required", ErrInvalid)
	}
	if n < 0 || n > MaxRangeBytes || off < 0 {
		return nil, fmt.Errorf("%w: range [%d, +%d): length must be in [0, %d]", ErrInvalid, off, n, MaxRangeBytes)
	}
	release, err := m.acquire(ctx, m.rangeSlots)
	if err != nil {
		return nil, err
	}
	defer release()
	rep, err := m.host.Resolve(ctx, user, b)
	if err != nil {
		return nil, err
	}
	data, err := readReplica(ctx, rep, b, off, n, m.reportCorrupt)
	if err == nil {
		m.mu.Lock()
		m.ctr.RangesServed++
		m.ctr.RangeBytesServed += int64(len(data))
		m.mu.Unlock()
	}
	return data, err
}

// ReadReplica reads [off, off+n) of a replica the DataNode resolved for a caller of the public
// Replicas service (dnext), as a raw read: in the raw pool of Config.MaxReads, verified against
// the replica's checksums, a corrupt finalized replica reported and counted as offload's are.
func (m *Manager) ReadReplica(ctx context.Context, rep Replica, b *pb.LocatedBlock, off, n int64) ([]byte, error) {
	release, err := m.acquire(ctx, m.rawSlots)
	if err != nil {
		return nil, err
	}
	defer release()
	return readReplica(ctx, rep, b, off, n, m.reportCorrupt)
}

// acquire takes one of slots, waiting until ctx ends.
func (m *Manager) acquire(ctx context.Context, slots chan struct{}) (func(), error) {
	select {
	case slots <- struct{}{}:
		return func() { <-slots }, nil
	default:
	}
	m.mu.Lock()
	m.ctr.ReadWaits++
	m.mu.Unlock()
	select {
	case slots <- struct{}{}:
		return func() { <-slots }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: waiting for one of %d concurrent reads (%s.reads.max): %w", ErrExhausted, cap(slots), Prefix, ctx.Err())
	}
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

// maxReported bounds the replicas remembered as reported; when full it is emptied (a replica
// reported again costs one host call, and the DataNode's report is idempotent).
const maxReported = 4096

type replicaKey struct {
	pool    string
	id, gen int64
}

// reportCorrupt counts a local replica that failed its checksums and reports it to the
// NameNode through the DataNode, once per replica (block and generation stamp).
func (m *Manager) reportCorrupt(ctx context.Context, b *pb.LocatedBlock, rep Replica, cause error) {
	k := replicaKey{b.GetBlockPoolId(), b.GetBlockId(), rep.GenStamp}
	m.mu.Lock()
	m.ctr.CorruptReads++
	_, done := m.reported[k]
	if !done {
		if len(m.reported) >= maxReported {
			clear(m.reported)
		}
		m.reported[k] = struct{}{}
		m.ctr.CorruptReplicas++
	}
	m.mu.Unlock()
	if done {
		return
	}
	m.log.Warn("local replica failed its checksums: reporting it to the NameNode; the range is read from another replica",
		"block_pool", b.GetBlockPoolId(), "block", b.GetBlockId(), "gen_stamp", rep.GenStamp, "error", cause)
	// The report must not end with the read that found the corruption.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	err := m.host.ReportBadBlock(rctx, b, rep.GenStamp, cause.Error())
	m.mu.Lock()
	if err != nil {
		m.ctr.BadBlockReportErrors++
		delete(m.reported, k) // try again when it is found again
	} else {
		m.ctr.BadBlocksReported++
	}
	m.mu.Unlock()
	if err != nil {
		m.log.Error("could not report a corrupt replica", "block", b.GetBlockId(), "error", err)
	}
}

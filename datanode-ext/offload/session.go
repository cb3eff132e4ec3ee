package offload

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/newtricks/newtricks/dataset"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
	"github.com/newtricks/newtricks/schedule"
	"github.com/newtricks/newtricks/xformgraph"
	"github.com/newtricks/newtricks/xformgraph/frame"
)

// Session is one reader's session with this node.
type Session struct {
	id, user string
	plan     *schedule.Plan
	idx      []*dataset.Index
	graphs   []*xformgraph.Graph
	files    [][]*pb.LocatedBlocks
	members  []string // UUIDs, in the reader's order
	self     int      // position of this node in members
	lo, hi   int      // the rank's slots
	ahead    int
	rawOnly  bool
	rd       *reader

	// Guarded by Manager.mu.
	cur      uint64 // lowest step not consumed
	steps    map[uint64]map[int]*job
	lastUsed time.Time
	closed   bool
}

// job is one owned sample of a step.
type job struct {
	s          *Session
	step       uint64
	slot       int
	sl         schedule.Slot
	state      int // queued, running, done
	canceled   bool
	frames     []byte
	err        error
	nodeMicros uint32
	done       chan struct{}
}

const (
	queued = iota
	running
	finished
)

func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// open validates the request completely and loads the sources' indexes. Nothing is prepared
// before every check passed.
func (m *Manager) open(ctx context.Context, user string, req *pb.OpenSessionRequest) (*Session, error) {
	spec, err := schedule.FromProto(req.GetSchedule())
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if int(req.GetRank()) >= spec.WorldSize {
		return nil, fmt.Errorf("%w: rank %d, world_size %d", ErrInvalid, req.GetRank(), spec.WorldSize)
	}
	if len(req.GetSources()) != len(spec.Sources) {
		return nil, fmt.Errorf("%w: %d sources for a schedule of %d", ErrInvalid, len(req.GetSources()), len(spec.Sources))
	}
	ahead := int(req.GetLookahead())
	if ahead == 0 {
		ahead = m.cfg.Lookahead
	}
	if ahead > m.cfg.MaxLookahead {
		return nil, fmt.Errorf("%w: lookahead %d, limit %d", ErrInvalid, ahead, m.cfg.MaxLookahead)
	}
	ms := req.GetMembers()
	if len(ms) == 0 || len(ms) > m.cfg.MaxMembers {
		return nil, fmt.Errorf("%w: %d members, want 1..%d", ErrInvalid, len(ms), m.cfg.MaxMembers)
	}
	selfUUID := m.self()
	if selfUUID == "" {
		return nil, fmt.Errorf("%w: the DataNode has not told its identity yet", ErrUnavailable)
	}
	s := &Session{id: newID(), user: user, self: -1, lo: 0, ahead: ahead, rawOnly: req.GetRawOnly(),
		steps: map[uint64]map[int]*job{}, cur: req.GetStartStep(), lastUsed: time.Now()}
	s.rd = &reader{host: m.host, peers: m.peers, user: user, self: selfUUID, members: map[string]string{}, paths: map[int64]resolved{},
		counted: m.peerRead}
	for i, mb := range ms {
		if mb.GetDatanodeUuid() == "" || mb.GetApiAddress() == "" {
			return nil, fmt.Errorf("%w: member %d needs a UUID and an API address", ErrInvalid, i)
		}
		if _, dup := s.rd.members[mb.GetDatanodeUuid()]; dup {
			return nil, fmt.Errorf("%w: member %s listed twice", ErrInvalid, mb.GetDatanodeUuid())
		}
		s.rd.members[mb.GetDatanodeUuid()] = mb.GetApiAddress()
		s.members = append(s.members, mb.GetDatanodeUuid())
		if mb.GetDatanodeUuid() == selfUUID {
			s.self = i
		}
	}
	if s.self < 0 {
		return nil, fmt.Errorf("%w: this DataNode (%s) is not among the session's members", ErrInvalid, selfUUID)
	}
	// Graphs compile before any byte is read.
	for i, src := range spec.Sources {
		g, err := xformgraph.Compile(src.Graph, nil, m.cfg.Limits)
		if err != nil {
			return nil, fmt.Errorf("%w: source %q: %w", ErrInvalid, src.Name, err)
		}
		s.graphs = append(s.graphs, g)
		_ = i
	}
	sizes := make([]int, len(spec.Sources))
	for i, src := range req.GetSources() {
		ib := src.GetIndexBlocks()
		if ib.GetFileLength() <= 0 || ib.GetFileLength() > dataset.MaxIndexBytes {
			return nil, fmt.Errorf("%w: source %d: index of %d bytes", ErrInvalid, i, ib.GetFileLength())
		}
		b, err := s.rd.read(ctx, ib, 0, ib.GetFileLength())
		if err != nil {
			return nil, fmt.Errorf("source %q: read index: %w", spec.Sources[i].Name, err)
		}
		ix, err := dataset.Parse(b)
		if err != nil {
			return nil, fmt.Errorf("%w: source %q: %w", ErrInvalid, spec.Sources[i].Name, err)
		}
		if !bytes.Equal(ix.SHA256(), src.GetIndexSha256()) {
			return nil, fmt.Errorf("%w: source %q: the index changed (SHA-256 %x, reader has %x)", ErrPrecondition, spec.Sources[i].Name, ix.SHA256(), src.GetIndexSha256())
		}
		if ix.Root() != spec.Sources[i].Dataset {
			return nil, fmt.Errorf("%w: source %q: index is of %s, not %s", ErrInvalid, spec.Sources[i].Name, ix.Root(), spec.Sources[i].Dataset)
		}
		if len(src.GetFiles()) != len(ix.Files()) {
			return nil, fmt.Errorf("%w: source %q: %d file block lists for %d files", ErrInvalid, spec.Sources[i].Name, len(src.GetFiles()), len(ix.Files()))
		}
		for j, f := range ix.Files() {
			if got := src.GetFiles()[j].GetFileLength(); got != f.GetLength() {
				return nil, fmt.Errorf("%w: source %q: %s has %d bytes, the index says %d (stale index)", ErrPrecondition, spec.Sources[i].Name, f.GetPath(), got, f.GetLength())
			}
		}
		s.idx = append(s.idx, ix)
		s.files = append(s.files, src.GetFiles())
		sizes[i] = ix.Len()
	}
	lookup := func(src int, key string) (int, bool) { return s.idx[src].Lookup(key) }
	if s.plan, err = schedule.NewPlan(spec, sizes, lookup); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if s.plan.End(s.cur) {
		return nil, fmt.Errorf("%w: start step %d is past the schedule", ErrInvalid, s.cur)
	}
	s.lo, s.hi = s.plan.RankRange(int(req.GetRank()))
	return s, nil
}

// readSample reads the encoded bytes of a slot.
func (s *Session) readSample(ctx context.Context, sl schedule.Slot) ([]byte, *pb.DatasetSample, error) {
	smp := s.idx[sl.Source].Sample(sl.Index)
	b, err := s.rd.read(ctx, s.files[sl.Source][smp.GetFile()], smp.GetOffset(), smp.GetLength())
	if err != nil {
		return nil, smp, fmt.Errorf("sample %q: %w", smp.GetKey(), err)
	}
	return b, smp, nil
}

// transform reads and transforms one slot into NTXF frames.
func (s *Session) transform(ctx context.Context, sl schedule.Slot) ([]byte, error) {
	data, smp, err := s.readSample(ctx, sl)
	if err != nil {
		return nil, err
	}
	out, err := s.graphs[sl.Source].Run(ctx, xformgraph.Sample{Key: smp.GetKey(), Epoch: sl.Epoch, Data: data})
	if err != nil {
		return nil, err
	}
	return out.AppendFrames(nil)
}

// restamp rewrites the determinism domain in every frame of a sample (a test node playing
// another build: see Options.Domain); the checksums are computed anew.
func restamp(b []byte, domain string) ([]byte, error) {
	var out []byte
	for len(b) > 0 {
		f, rest, err := frame.Parse(b)
		if err != nil {
			return nil, err
		}
		f.Domain = domain
		if out, err = f.AppendTo(out); err != nil {
			return nil, err
		}
		b = rest
	}
	return out, nil
}

// raw reads one slot and frames its bytes untransformed.
func (s *Session) raw(ctx context.Context, sl schedule.Slot) ([]byte, error) {
	data, _, err := s.readSample(ctx, sl)
	if err != nil {
		return nil, err
	}
	return xformgraph.RawFrame(data).AppendTo(nil)
}

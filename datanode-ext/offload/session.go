package offload

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"time"

	"github.com/newtricks/newtricks/dataset"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
	"github.com/newtricks/newtricks/schedule"
	"github.com/newtricks/newtricks/xformgraph"
	"github.com/newtricks/newtricks/xformgraph/frame"
)

// OpenRequest asks for a session (the wire's OpenSessionRequest, converted by the edge; the
// user is the caller the edge resolved).
type OpenRequest struct {
	// Schedule is the spec shared by trainer and storage.
	Schedule *schedule.Spec
	// scheduleErr is why the wire's schedule did not convert. openSession reports it where it
	// reads the schedule, so that a request is refused for the node's own limits first, as
	// it always was.
	scheduleErr error
	// Rank is the reader's rank, < Schedule.WorldSize.
	Rank int
	// StartStep is the first step the reader will ask for.
	StartStep uint64
	// Lookahead is how many steps to keep ready ahead of the last one asked for; 0 takes
	// Config.Lookahead.
	Lookahead int
	// Sources are one per schedule source, in the same order.
	Sources []Source
	// Members are the DataNode UUIDs of every datanode-ext of the session, this one included;
	// ownership is computed over exactly this list, in this order. Only UUIDs: where a member
	// listens comes from the Directory, never from a request.
	Members []string
	// DeterminismDomain is the reader's (xformgraph.Domain); the node compares it with its own.
	DeterminismDomain string
	// RawOnly: the reader transforms everything itself; the node only reads raw bytes.
	RawOnly bool
}

// Source is what the reader says about one source: which version of its index it loaded.
// The index's and its files' blocks, lengths and replica holders the node locates itself,
// as the session's user (Namespace).
type Source struct {
	// IndexSHA256 is the SHA-256 of the index the reader loaded; another one is refused.
	IndexSHA256 []byte
}

// OpenResult is an opened session.
type OpenResult struct {
	SessionID string
	// DatanodeUUID is this node's.
	DatanodeUUID string
	// DeterminismDomain is this node's; DomainMatch says whether it equals the reader's.
	DeterminismDomain string
	DomainMatch       bool
	// Lookahead is the effective lookahead.
	Lookahead int
	// Shedding: the governor sheds now (samples will come back raw).
	Shedding bool
}

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

func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Open validates and opens a session for user. The session's place under the caps
// (Config.MaxSessions for the node, Config.MaxSessionsPerUser for the user) is reserved before
// the slow open (reading and checking the indexes), so that concurrent opens cannot exceed
// them; a failed open gives its place back.
func (m *Manager) Open(ctx context.Context, user string, req OpenRequest) (OpenResult, error) {
	m.mu.Lock()
	n, mine := len(m.sessions)+m.opening, m.perUser[user]
	switch {
	case n >= m.cfg.MaxSessions:
		m.ctr.SessionsRefused++
		m.mu.Unlock()
		return OpenResult{}, fmt.Errorf("%w: %d sessions open or opening, limit %d (%s.sessions.max)", ErrExhausted, n, m.cfg.MaxSessions, Prefix)
	case mine >= m.cfg.MaxSessionsPerUser:
		m.ctr.SessionsRefused++
		m.mu.Unlock()
		return OpenResult{}, fmt.Errorf("%w: user %s has %d sessions open or opening, limit %d (%s.sessions.max.per.user)", ErrExhausted, user, mine, m.cfg.MaxSessionsPerUser, Prefix)
	}
	m.opening++
	m.perUser[user]++
	m.mu.Unlock()
	opened := false
	defer func() {
		m.mu.Lock()
		m.opening--
		if !opened {
			m.releaseUserLocked(user)
		}
		m.mu.Unlock()
	}()
	var s *Session
	err := m.safely("open session", func() error {
		var err error
		s, err = m.openSession(ctx, user, req)
		return err
	})
	if err != nil {
		return OpenResult{}, err
	}
	match := m.domain == req.DeterminismDomain
	m.mu.Lock()
	m.sessions[s.id] = s
	opened = true
	m.ctr.Sessions = len(m.sessions)
	m.ctr.SessionsOpened++
	if s.rawOnly {
		m.ctr.SessionsRawOnly++
	}
	if !match {
		m.ctr.DomainMismatches++
	}
	if err := m.prepareLocked(s); err != nil {
		m.mu.Unlock()
		return OpenResult{}, err
	}
	m.mu.Unlock()
	m.log.Info("offload session opened", "session", s.id, "user", user, "rank", req.Rank,
		"start_step", req.StartStep, "members", len(s.members), "raw_only", s.rawOnly, "domain_match", match)
	if !match && !s.rawOnly {
		// The reader learns it from the answer and reopens raw-only (docs/offload.md).
		m.log.Warn("offload session from a reader of another determinism domain", "session", s.id,
			"reader_domain", req.DeterminismDomain, "node_domain", m.domain)
	}
	return OpenResult{SessionID: s.id, DatanodeUUID: m.self(), DeterminismDomain: m.domain,
		DomainMatch: match, Lookahead: s.ahead, Shedding: m.gov.Shedding()}, nil
}

// releaseUserLocked gives back one of user's session places.
func (m *Manager) releaseUserLocked(user string) {
	if m.perUser[user]--; m.perUser[user] <= 0 {
		delete(m.perUser, user)
	}
}

// openSession validates the request completely and loads the sources' indexes. Nothing is
// prepared before every check passed.
func (m *Manager) openSession(ctx context.Context, user string, req OpenRequest) (*Session, error) {
	if req.scheduleErr != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, req.scheduleErr)
	}
	spec := req.Schedule
	if spec == nil {
		return nil, fmt.Errorf("%w: no schedule", ErrInvalid)
	}
	if req.Rank < 0 || req.Rank >= spec.WorldSize {
		return nil, fmt.Errorf("%w: rank %d, world_size %d", ErrInvalid, req.Rank, spec.WorldSize)
	}
	if len(req.Sources) != len(spec.Sources) {
		return nil, fmt.Errorf("%w: %d sources for a schedule of %d", ErrInvalid, len(req.Sources), len(spec.Sources))
	}
	ahead := req.Lookahead
	if ahead == 0 {
		ahead = m.cfg.Lookahead
	}
	if ahead < 0 || ahead > m.cfg.MaxLookahead {
		return nil, fmt.Errorf("%w: lookahead %d, limit %d", ErrInvalid, ahead, m.cfg.MaxLookahead)
	}
	if limit := m.cfg.StepLimit(len(spec.Sources)); req.StartStep >= limit {
		return nil, fmt.Errorf("%w: start step %d, limit %d for %d sources (%s.step.max)", ErrInvalid, req.StartStep, limit, len(spec.Sources), Prefix)
	}
	ms := req.Members
	if len(ms) == 0 || len(ms) > m.cfg.MaxMembers {
		return nil, fmt.Errorf("%w: %d members, want 1..%d", ErrInvalid, len(ms), m.cfg.MaxMembers)
	}
	selfUUID := m.self()
	if selfUUID == "" {
		return nil, fmt.Errorf("%w: the DataNode has not told its identity yet", ErrUnavailable)
	}
	s := &Session{id: newID(), user: user, self: -1, lo: 0, ahead: ahead, rawOnly: req.RawOnly,
		steps: map[uint64]map[int]*job{}, cur: req.StartStep, lastUsed: time.Now()}
	s.rd = m.newReader(user, selfUUID)
	seen := make(map[string]bool, len(ms))
	for i, uuid := range ms {
		if err := checkUUID(uuid); err != nil {
			return nil, fmt.Errorf("%w: member %d: %w", ErrInvalid, i, err)
		}
		if seen[uuid] {
			return nil, fmt.Errorf("%w: member %s listed twice", ErrInvalid, uuid)
		}
		seen[uuid] = true
		s.members = append(s.members, uuid)
		if uuid == selfUUID {
			s.self = i
		}
	}
	if s.self < 0 {
		return nil, fmt.Errorf("%w: this DataNode (%s) is not among the session's members", ErrInvalid, selfUUID)
	}
	if m.ns == nil {
		return nil, fmt.Errorf("%w: offload needs namenode-ext's address (newtricks.datanode.ext.namenode.api) to locate a dataset", ErrPrecondition)
	}
	for i, src := range req.Sources {
		if len(src.IndexSHA256) != sha256.Size {
			return nil, fmt.Errorf("%w: source %d: index_sha256 of %d bytes", ErrInvalid, i, len(src.IndexSHA256))
		}
	}
	// Graphs compile before any byte is read.
	for _, src := range spec.Sources {
		g, err := xformgraph.Compile(src.Graph, nil, m.cfg.Limits)
		if err != nil {
			return nil, fmt.Errorf("%w: source %q: %w", ErrInvalid, src.Name, err)
		}
		s.graphs = append(s.graphs, g)
	}
	sizes := make([]int, len(spec.Sources))
	for i, src := range req.Sources {
		ix, files, err := m.loadSource(ctx, s, spec.Sources[i], src)
		if err != nil {
			return nil, err
		}
		s.idx = append(s.idx, ix)
		s.files = append(s.files, files)
		sizes[i] = ix.Len()
	}
	lookup := func(src int, key string) (int, bool) { return s.idx[src].Lookup(key) }
	var err error
	if s.plan, err = schedule.NewPlan(spec, sizes, lookup); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if s.plan.End(s.cur) {
		return nil, fmt.Errorf("%w: start step %d is past the schedule", ErrInvalid, s.cur)
	}
	// The start step costs time in proportion to its number (Config.StepLimit): computed here,
	// outside Manager.mu, it leaves the plan's cursor cached, and the steps Open prepares under
	// the lock cost only their distance from it.
	if _, err := s.plan.Step(s.cur); err != nil {
		return nil, fmt.Errorf("%w: start step %d: %w", ErrInvalid, s.cur, err)
	}
	s.lo, s.hi = s.plan.RankRange(req.Rank)
	return s, nil
}

// loadSource locates source's index as the session's user (Namespace, with tokens the
// NameNode issues to that user: a dataset the user may not read fails here with the
// NameNode's PERMISSION_DENIED), reads it, checks it is the version the reader loaded (its
// SHA-256) and of this dataset, then locates every file it names and checks each file's real
// length against the index. The index's own validation (dataset.Parse) keeps every sample's
// byte range inside its file's declared length, so after these checks every sample lies
// inside a real file: nothing a sample reads is sized by the caller.
func (m *Manager) loadSource(ctx context.Context, s *Session, spec schedule.Source, src Source) (*dataset.Index, []*pb.LocatedBlocks, error) {
	ip := path.Join(spec.Dataset, dataset.IndexName)
	lbs, err := m.ns.Locate(ctx, s.user, []string{ip})
	if err != nil {
		return nil, nil, fmt.Errorf("source %q: locate %s: %w", spec.Name, ip, err)
	}
	ib := lbs[0]
	if ib.GetFileLength() <= 0 || ib.GetFileLength() > dataset.MaxIndexBytes {
		return nil, nil, fmt.Errorf("%w: source %q: index %s is %d bytes (limit %d)", ErrInvalid, spec.Name, ip, ib.GetFileLength(), dataset.MaxIndexBytes)
	}
	if ib.GetUnderConstruction() {
		return nil, nil, fmt.Errorf("%w: source %q: index %s is still being written", ErrPrecondition, spec.Name, ip)
	}
	b, err := s.rd.read(ctx, ib, 0, ib.GetFileLength())
	if err != nil {
		return nil, nil, fmt.Errorf("source %q: read index: %w", spec.Name, err)
	}
	ix, err := dataset.Parse(b)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: source %q: %w", ErrInvalid, spec.Name, err)
	}
	if !bytes.Equal(ix.SHA256(), src.IndexSHA256) {
		return nil, nil, fmt.Errorf("%w: source %q: the index changed (SHA-256 %x, reader has %x)", ErrPrecondition, spec.Name, ix.SHA256(), src.IndexSHA256)
	}
	if ix.Root() != spec.Dataset {
		return nil, nil, fmt.Errorf("%w: source %q: index is of %s, not %s", ErrInvalid, spec.Name, ix.Root(), spec.Dataset)
	}
	paths := make([]string, len(ix.Files()))
	for j := range paths {
		paths[j] = ix.FilePath(j)
	}
	files, err := m.ns.Locate(ctx, s.user, paths)
	if err != nil {
		return nil, nil, fmt.Errorf("source %q: locate its files: %w", spec.Name, err)
	}
	if len(files) != len(paths) {
		return nil, nil, fmt.Errorf("%w: source %q: %d files located for %d", ErrUnavailable, spec.Name, len(files), len(paths))
	}
	for j, f := range ix.Files() {
		if got := files[j].GetFileLength(); got != f.GetLength() {
			return nil, nil, fmt.Errorf("%w: source %q: %s has %d bytes, the index says %d (stale index)", ErrPrecondition, spec.Name, f.GetPath(), got, f.GetLength())
		}
		if files[j].GetUnderConstruction() {
			return nil, nil, fmt.Errorf("%w: source %q: %s is still being written", ErrPrecondition, spec.Name, f.GetPath())
		}
	}
	return ix, files, nil
}

// checkUUID refuses what cannot be a DataNode UUID (they are short and plain) before it is
// kept or logged.
func checkUUID(u string) error {
	if u == "" || len(u) > 128 {
		return fmt.Errorf("a DataNode UUID has 1..128 characters, not %d", len(u))
	}
	for _, c := range u {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return fmt.Errorf("a DataNode UUID has only [A-Za-z0-9._-]")
		}
	}
	return nil
}

// session returns user's session id and marks it used; Manager.mu is held.
func (m *Manager) session(user, id string) (*Session, error) {
	s, ok := m.sessions[id]
	if !ok {
		return nil, fmt.Errorf("%w: session %q (expired, closed, or the node restarted: open a new one)", ErrNotFound, id)
	}
	if s.user != user {
		return nil, fmt.Errorf("%w: session %q belongs to another user", ErrPermission, id)
	}
	s.lastUsed = time.Now()
	return s, nil
}

// Close ends user's session id and drops its queued work.
func (m *Manager) Close(user, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.session(user, id)
	if err != nil {
		return err
	}
	m.dropLocked(s)
	return nil
}

// dropLocked forgets a session and every step it prepared.
func (m *Manager) dropLocked(s *Session) {
	s.closed = true
	for step := range s.steps {
		m.dropStepLocked(s, step)
	}
	if _, ok := m.sessions[s.id]; ok {
		delete(m.sessions, s.id)
		m.releaseUserLocked(s.user)
	}
	m.ctr.Sessions = len(m.sessions)
}

// reapLocked closes the sessions not used for Config.Idle.
func (m *Manager) reapLocked() {
	for _, s := range m.sessions {
		if time.Since(s.lastUsed) > m.cfg.Idle {
			m.log.Info("offload session expired", "session", s.id, "user", s.user)
			m.dropLocked(s)
		}
	}
}

// readSample reads the encoded bytes of a slot, after checking the length its index entry
// claims, before anything is read or allocated: more than the graph's input limit is
// RESOURCE_EXHAUSTED (the reader's own transform would refuse it too), more than this node's
// read.max.bytes is UNAVAILABLE (the reader reads it from HDFS and transforms it itself: the
// same bytes as on every path).
func (s *Session) readSample(ctx context.Context, sl schedule.Slot, maxRead int64) ([]byte, *pb.DatasetSample, error) {
	smp := s.idx[sl.Source].Sample(sl.Index)
	n := smp.GetLength()
	if in := s.graphs[sl.Source].Limits.MaxInputBytes; n > in {
		return nil, smp, fmt.Errorf("sample %q: %w: %d bytes, more than the graph's input limit (%d)", smp.GetKey(), xformgraph.ErrLimit, n, in)
	}
	if n > maxRead {
		return nil, smp, fmt.Errorf("sample %q: %w: %d bytes, more than %s (%d) on this node: read it from HDFS",
			smp.GetKey(), ErrUnavailable, n, ReadMaxBytesKey, maxRead)
	}
	b, err := s.rd.readMax(ctx, s.files[sl.Source][smp.GetFile()], smp.GetOffset(), n, maxRead, ReadMaxBytesKey)
	if err != nil {
		return nil, smp, fmt.Errorf("sample %q: %w", smp.GetKey(), err)
	}
	return b, smp, nil
}

// raw reads one slot and frames its bytes untransformed.
func (s *Session) raw(ctx context.Context, sl schedule.Slot, maxRead int64) ([]byte, error) {
	data, _, err := s.readSample(ctx, sl, maxRead)
	if err != nil {
		return nil, err
	}
	return xformgraph.RawFrame(data).AppendTo(nil)
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

package reader

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/newtricks/newtricks/dataset"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
	"github.com/newtricks/newtricks/schedule"
	"github.com/newtricks/newtricks/xformgraph"
	"github.com/newtricks/newtricks/xformgraph/frame"
)

// Sentinel errors.
var (
	// ErrConfig: a bad Config.
	ErrConfig = errors.New("reader: bad configuration")
	// ErrSample is wrapped by every per-sample error (SampleError).
	ErrSample = errors.New("reader: sample failed")
	// ErrEnd: the schedule has no more steps.
	ErrEnd = schedule.ErrEnd
)

// Config of a reader.
type Config struct {
	// User is the HDFS user the reader acts as (every call names it). With Auth proving an
	// identity it may be empty: the calls act as the authenticated caller (another name is a
	// proxy-user request, allowed only by the cluster's hadoop.proxyuser.* rules).
	User string
	// Auth, if set, authenticates every connection the reader makes to the nodes (TLS with
	// the node's host name, Kerberos for its service principal, or a delegation token);
	// build the Locator's and Directory's connection with Auth.DialNameNodeExt and the
	// Store's HDFS client with Auth.HDFSClient, so that all of them prove the same identity.
	// Nil: plaintext, simple authentication (or Dial's own credentials).
	Auth *Credentials
	// Spec is the job's schedule; Rank this reader's rank.
	Spec *schedule.Spec
	Rank int
	// StartStep is the first step (a resumed job starts where it stopped).
	StartStep uint64
	// Directory lists the cluster's datanode-ext endpoints (namenode-ext's DataNodeDirectory:
	// NamespaceDirectory); the reader takes its session's members from it at Open and again
	// every Rediscover, so nodes that join or leave are picked up between steps. The nodes
	// themselves reach each other only at the addresses this directory lists. Nil, and no
	// Nodes: everything is read from HDFS and transformed locally (the baseline).
	Directory Directory
	// Nodes, if set, are datanode-ext API addresses (host:port) to use instead of the
	// Directory's (an override for tests and tools: no rediscovery).
	Nodes []string
	// Rediscover is how often the Directory is asked again (default 10 s).
	Rediscover time.Duration
	// Dial connects to a node (default: Auth's connection, or grpc.NewClient with insecure
	// credentials without Auth). Not with Auth.
	Dial func(addr string) (*grpc.ClientConn, error)
	// Locator and Store are the reader's ways into HDFS.
	Locator Locator
	Store   Store
	// Prefetch is how many steps are fetched ahead of the one returned (default 2).
	Prefetch int
	// Lookahead is asked of the nodes (0: their default).
	Lookahead uint32
	// MaxWait is how long a node may wait for its transforms before answering raw
	// (default 2 s).
	MaxWait time.Duration
	// LocalWorkers transform locally in parallel (default 1).
	LocalWorkers int
	// Retry is how often a node that failed is tried again (default 2 s).
	Retry time.Duration
	// ForceRawOnly asks the nodes for raw bytes only (the reader transforms everything).
	ForceRawOnly bool
	// Partial, for the steps it names, lists the slots of the global batch this reader reads
	// instead of its rank's range (ascending, each < global batch): how a job resumes from a
	// state saved mid-step or at another world size (newtricks.state in Python;
	// docs/offload.md, "Resuming"). Slots outside the rank's range are read from HDFS.
	Partial map[uint64][]int
}

// Sample is one sample of a step.
type Sample struct {
	Slot   int
	Source int
	Key    string
	Epoch  uint64
	// Frames are the graph's outputs as NTXF tensor frames (docs/xformgraph.md), in the
	// order of Reader.Outputs; Reader.OutputSources says which member each is made from.
	Frames []byte
	// Primary is the name of the sample's primary media member (its first: the graph's
	// "input"), e.g. "jpg"; "" for a sample of a version 1 index.
	Primary string
	// Members are the sample's members that are not media (labels, captions, metadata), raw,
	// in index order (Decode reads them by the WebDataset rules). Like Frames they may lie in
	// the step's pooled buffers (Step.Release).
	Members []dataset.Member
	// Err is set when this sample failed (it wraps ErrSample and names the sample).
	Err error
	// Path says how the sample was made: "offload" (tensor from a DataNode), "raw" (raw bytes
	// from a DataNode, transformed here), "local" (read from HDFS, transformed here).
	Path string

	buf *sharedBuf // pooled buffer Frames lies in (offload path), released by Step.Release
}

// Step is the samples of one step for this reader's rank, in slot order.
type Step struct {
	Step    uint64
	Samples []Sample

	pool *bufPool
	pos  map[int]int // slot -> index in Samples, for a Partial step (nil: slot - lo)
}

// at returns the step's sample of slot k, or nil when the step does not have it.
func (st *Step) at(k, lo int) *Sample {
	if st.pos != nil {
		if i, ok := st.pos[k]; ok {
			return &st.Samples[i]
		}
		return nil
	}
	if i := k - lo; i >= 0 && i < len(st.Samples) {
		return &st.Samples[i]
	}
	return nil
}

// Release hands the step's sample buffers back to the reader, which receives later steps
// into them instead of allocating (and zeroing) new memory. Call it once the step's Frames
// are no longer used (copied into the model's input, for example); the Frames of a released
// step are set to nil and must not be read again through other references. Optional: a step
// that is never released is garbage collected as usual.
func (st *Step) Release() {
	if st == nil || st.pool == nil {
		return
	}
	for i := range st.Samples {
		s := &st.Samples[i]
		if s.buf != nil {
			s.buf.release(st.pool)
			s.buf, s.Frames, s.Members = nil, nil, nil
		}
	}
}

// SampleError names the failed sample.
type SampleError struct {
	Step uint64
	Slot int
	Key  string
	Err  error
}

func (e *SampleError) Error() string {
	return fmt.Sprintf("step %d slot %d sample %q: %v", e.Step, e.Slot, e.Key, e.Err)
}
func (e *SampleError) Unwrap() []error { return []error{ErrSample, e.Err} }

type source struct {
	ix    *dataset.Index
	graph *xformgraph.Graph
}

// node is one member of one membership (a node in two memberships has two, sharing the
// connection).
type node struct {
	addr   string
	uuid   string
	domain string
	client pb.OffloadClient
	mem    *membership

	noBatch atomic.Bool // the node does not implement GetStepBatch (an older datanode-ext)

	mu        sync.Mutex
	session   string
	downAt    time.Time // zero while up
	reopening bool
}

// Reader iterates over the steps of one rank.
type Reader struct {
	cfg    Config
	plan   *schedule.Plan
	srcs   []*source
	lo, hi int
	domain string // this process's determinism domain
	pool   bufPool

	// mem is the current membership (nil: no offload); next is the step the prefetcher
	// works on (where a new membership's sessions start).
	mem  atomic.Pointer[membership]
	next atomic.Uint64
	// conns are the connections to nodes by address, shared by memberships.
	connMu sync.Mutex
	conns  map[string]*grpc.ClientConn
	watch  sync.WaitGroup

	// rawOnly: every sample is transformed here (the nodes only read and send raw bytes), so
	// that all samples come from one path. Set by ForceRawOnly, or when a node's determinism
	// domain differs from the reader's; never cleared.
	rawOnly atomic.Bool

	stats   statsCounter
	cancel  context.CancelFunc
	results chan stepResult
	sem     chan struct{}
	done    chan struct{}
}

type stepResult struct {
	st  *Step
	err error
}

// Open loads the sources' indexes, locates their files, opens a session on every node that
// answers and starts prefetching from StartStep.
func Open(ctx context.Context, cfg Config) (*Reader, error) {
	if cfg.User == "" && !cfg.Auth.Proves() || cfg.Spec == nil || cfg.Locator == nil || cfg.Store == nil {
		return nil, fmt.Errorf("%w: User (unless Auth proves an identity), Spec, Locator and Store are required", ErrConfig)
	}
	if cfg.Dial != nil && cfg.Auth != nil {
		return nil, fmt.Errorf("%w: Dial or Auth, not both (Auth makes the reader's connections)", ErrConfig)
	}
	if cfg.Rank < 0 || cfg.Rank >= cfg.Spec.WorldSize {
		return nil, fmt.Errorf("%w: rank %d, world size %d", ErrConfig, cfg.Rank, cfg.Spec.WorldSize)
	}
	if cfg.Prefetch <= 0 {
		cfg.Prefetch = 2
	}
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = 2 * time.Second
	}
	if cfg.LocalWorkers <= 0 {
		cfg.LocalWorkers = 1
	}
	if cfg.Retry <= 0 {
		cfg.Retry = 2 * time.Second
	}
	if cfg.Dial == nil && cfg.Auth == nil {
		cfg.Dial = dialInsecure
	}
	if cfg.Rediscover <= 0 {
		cfg.Rediscover = 10 * time.Second
	}
	for step, ks := range cfg.Partial {
		for i, k := range ks {
			if k < 0 || k >= cfg.Spec.GlobalBatch || i > 0 && k <= ks[i-1] {
				return nil, fmt.Errorf("%w: partial step %d: slots must be ascending and below the global batch %d", ErrConfig, step, cfg.Spec.GlobalBatch)
			}
		}
	}
	r := &Reader{cfg: cfg, sem: make(chan struct{}, cfg.LocalWorkers), domain: xformgraph.Domain().String(),
		conns: map[string]*grpc.ClientConn{}}
	if cfg.ForceRawOnly {
		r.goRawOnly("asked for by the caller (Config.ForceRawOnly)")
	}
	sizes := make([]int, len(cfg.Spec.Sources))
	for i, src := range cfg.Spec.Sources {
		s, err := r.loadSource(ctx, src)
		if err != nil {
			return nil, fmt.Errorf("source %q: %w", src.Name, err)
		}
		r.srcs = append(r.srcs, s)
		sizes[i] = s.ix.Len()
	}
	lookup := func(src int, key string) (int, bool) { return r.srcs[src].ix.Lookup(key) }
	var err error
	if r.plan, err = schedule.NewPlan(cfg.Spec, sizes, lookup); err != nil {
		return nil, err
	}
	r.lo, r.hi = r.plan.RankRange(cfg.Rank)
	r.next.Store(cfg.StartStep)
	pctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	if r.offload() {
		m, err := r.discover(ctx)
		if err != nil {
			cancel()
			r.closeConns()
			return nil, err
		}
		r.mem.Store(m)
		r.openAll(pctx, m, cfg.StartStep)
		if len(cfg.Nodes) == 0 {
			r.watch.Add(1)
			go r.watchDirectory(pctx)
		}
	}
	r.results = make(chan stepResult, cfg.Prefetch)
	r.done = make(chan struct{})
	go r.prefetch(pctx)
	return r, nil
}

// offload reports whether the reader asks nodes at all.
func (r *Reader) offload() bool { return r.cfg.Directory != nil || len(r.cfg.Nodes) > 0 }

func (r *Reader) loadSource(ctx context.Context, src schedule.Source) (*source, error) {
	p := path.Join(src.Dataset, dataset.IndexName)
	size, err := r.cfg.Store.Size(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("index %s: %w", p, err)
	}
	if size > dataset.MaxIndexBytes {
		return nil, fmt.Errorf("%w: index %s is %d bytes", dataset.ErrInvalid, p, size)
	}
	b, err := r.cfg.Store.ReadAt(ctx, p, 0, size)
	if err != nil {
		return nil, err
	}
	ix, err := dataset.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if ix.Root() != src.Dataset {
		return nil, fmt.Errorf("%w: %s was built for %s", dataset.ErrInvalid, p, ix.Root())
	}
	g, err := xformgraph.Compile(src.Graph, nil, xformgraph.Limits{})
	if err != nil {
		return nil, err
	}
	return &source{ix: ix, graph: g}, nil
}

// openSession opens a session on n from step on. A node that answers with a determinism
// domain other than the reader's (a node restarted with other libraries, say) turns the
// reader raw-only: that session is closed and opened again raw-only, and so are the others.
func (r *Reader) openSession(ctx context.Context, n *node, step uint64) error {
	for {
		raw := r.rawOnly.Load()
		req := &pb.OpenSessionRequest{User: r.cfg.User, Schedule: r.cfg.Spec.ToProto(), Rank: uint32(r.cfg.Rank),
			StartStep: step, Lookahead: r.cfg.Lookahead, DeterminismDomain: r.domain, RawOnly: raw}
		for _, s := range r.srcs {
			req.Sources = append(req.Sources, &pb.SessionSource{IndexSha256: s.ix.SHA256()})
		}
		for _, uuid := range n.mem.uuids {
			req.Members = append(req.Members, &pb.SessionMember{DatanodeUuid: uuid})
		}
		octx, cancel := context.WithTimeout(ctx, 30*time.Second)
		resp, err := n.client.OpenSession(octx, req)
		cancel()
		if err != nil {
			return err
		}
		if d := resp.GetDeterminismDomain(); !raw && (d != r.domain || !resp.GetDomainMatch()) {
			r.goRawOnly(domainMismatch(n.addr, resp.GetDatanodeUuid(), d, r.domain))
			r.closeSession(n, resp.GetSessionId())
			continue
		}
		n.mu.Lock()
		n.session, n.downAt = resp.GetSessionId(), time.Time{}
		n.mu.Unlock()
		if !raw && r.rawOnly.Load() {
			// The reader went raw-only while this session opened: open it again raw-only.
			n.mu.Lock()
			if n.session == resp.GetSessionId() {
				n.session = ""
			}
			n.mu.Unlock()
			r.closeSession(n, resp.GetSessionId())
			continue
		}
		return nil
	}
}

func domainMismatch(addr, uuid, node, reader string) string {
	return fmt.Sprintf("determinism domain of node %s (%s) is %q, the reader's is %q", addr, uuid, node, reader)
}

// goRawOnly makes every later sample go through the reader's own transforms: the nodes'
// sessions are reopened raw-only (in the background, like a reconnect; their slots are read
// from HDFS meanwhile) and tensors still arriving on the old sessions are refused.
func (r *Reader) goRawOnly(reason string) {
	if !r.rawOnly.CompareAndSwap(false, true) {
		return
	}
	r.stats.setRawOnly(reason)
	m := r.mem.Load()
	if m == nil {
		return
	}
	for _, n := range m.nodes {
		n.mu.Lock()
		old := n.session
		n.session = ""
		n.mu.Unlock()
		if old != "" {
			go r.closeSession(n, old)
		}
	}
}

func (r *Reader) closeSession(n *node, id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	n.client.CloseSession(ctx, &pb.CloseSessionRequest{User: r.cfg.User, SessionId: id})
}

// Next returns the next step. Per-sample failures are in Sample.Err; an error ends the
// iteration (ErrEnd at the end of the schedule, or ctx's error).
func (r *Reader) Next(ctx context.Context) (*Step, error) {
	start := time.Now()
	select {
	case res, ok := <-r.results:
		if !ok {
			return nil, fmt.Errorf("reader closed")
		}
		r.stats.wait(time.Since(start))
		return res.st, res.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close stops prefetching and closes the sessions.
func (r *Reader) Close() error {
	r.cancel()
	<-r.done
	r.watch.Wait()
	if m := r.mem.Load(); m != nil {
		r.closeMembership(m)
	}
	r.closeConns()
	return nil
}

func (r *Reader) prefetch(ctx context.Context) {
	defer close(r.done)
	defer close(r.results)
	for step := r.cfg.StartStep; ; step++ {
		r.next.Store(step)
		var res stepResult
		if r.plan.End(step) {
			res.err = fmt.Errorf("%w: step %d", ErrEnd, step)
		} else {
			res.st, res.err = r.fetch(ctx, step)
		}
		select {
		case r.results <- res:
		case <-ctx.Done():
			return
		}
		if res.err != nil {
			return
		}
	}
}

// fetch makes one step: owned slots from their nodes, the rest locally.
func (r *Reader) fetch(ctx context.Context, step uint64) (*Step, error) {
	var slots []schedule.Slot
	var owners []int
	var err error
	m := r.mem.Load()
	if m != nil {
		m.use.RLock()
		defer m.use.RUnlock()
	}
	if m != nil && len(m.nodes) > 0 {
		slots, owners, err = dataset.StepOwners(r.plan, r.ixs(), m.files, m.uuids, step)
	} else {
		slots, err = r.plan.Step(step)
	}
	if err != nil {
		return nil, err
	}
	ks, partial := r.cfg.Partial[step]
	if !partial {
		ks = make([]int, 0, r.hi-r.lo)
		for k := r.lo; k < r.hi; k++ {
			ks = append(ks, k)
		}
	}
	st := &Step{Step: step, Samples: make([]Sample, len(ks)), pool: &r.pool}
	if partial {
		st.pos = make(map[int]int, len(ks))
	}
	for i, k := range ks {
		sl := slots[k]
		ds := r.srcs[sl.Source].ix.Sample(sl.Index)
		st.Samples[i] = Sample{Slot: k, Source: sl.Source, Key: ds.GetKey(), Epoch: sl.Epoch, Primary: primaryName(ds)}
		if partial {
			st.pos[k] = i
		}
	}
	perNode := map[int][]uint32{}
	var local []int
	for _, k := range ks {
		// A session serves its rank's range only: other slots of a Partial step are read here.
		if owners != nil && owners[k] >= 0 && k >= r.lo && k < r.hi && r.up(ctx, m.nodes[owners[k]], step) {
			perNode[owners[k]] = append(perNode[owners[k]], uint32(k))
		} else {
			local = append(local, k)
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for ni, ks := range perNode {
		wg.Add(1)
		go func(n *node, ks []uint32) {
			defer wg.Done()
			missing := r.fromNode(ctx, n, step, ks, st, slots)
			mu.Lock()
			local = append(local, missing...)
			mu.Unlock()
		}(m.nodes[ni], ks)
	}
	wg.Wait()
	for _, k := range local {
		wg.Add(1)
		r.sem <- struct{}{}
		go func(k int) {
			defer wg.Done()
			defer func() { <-r.sem }()
			r.localSample(ctx, step, st.at(k, r.lo), slots[k])
		}(k)
	}
	wg.Wait()
	return st, ctx.Err()
}

func (r *Reader) ixs() []*dataset.Index {
	out := make([]*dataset.Index, len(r.srcs))
	for i, s := range r.srcs {
		out[i] = s.ix
	}
	return out
}

// up reports whether a node has a session. A node that failed is tried again every
// cfg.Retry in the background (a dead host can take seconds to time out), so steps never wait
// for a reconnect: its slots are read from HDFS until the new session is open.
func (r *Reader) up(ctx context.Context, n *node, step uint64) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.downAt.IsZero() && n.session != "" {
		return true
	}
	if n.reopening || time.Since(n.downAt) < r.cfg.Retry || n.mem.closed.Load() {
		return false
	}
	n.reopening = true
	go func() {
		err := r.openSession(ctx, n, step)
		n.mu.Lock()
		n.reopening = false
		if err != nil {
			n.downAt = time.Now()
		}
		n.mu.Unlock()
		if err == nil {
			r.stats.add(&r.stats.reconnects, 1)
		}
	}()
	return false
}

// markDown records that a call on session id failed. A session replaced meanwhile (reopened
// raw-only, or after a reconnect) stays.
func (r *Reader) markDown(n *node, id string) {
	n.mu.Lock()
	if n.session == id {
		n.downAt, n.session = time.Now(), ""
	}
	n.mu.Unlock()
}

// fromNode asks one node for its slots and returns the slots left for local work. It uses
// GetStepBatch (a step's ready samples in one message), or GetStep on a node that does not
// implement it (an older datanode-ext).
func (r *Reader) fromNode(ctx context.Context, n *node, step uint64, ks []uint32, st *Step, slots []schedule.Slot) []int {
	n.mu.Lock()
	id := n.session
	n.mu.Unlock()
	cctx, cancel := context.WithTimeout(ctx, r.cfg.MaxWait+30*time.Second)
	defer cancel()
	got := map[int]bool{}
	missing := func() []int {
		var out []int
		for _, k := range ks {
			if !got[int(k)] {
				out = append(out, int(k))
			}
		}
		return out
	}
	if id == "" { // went raw-only since up(): the session is being reopened
		return missing()
	}
	codec := &sampleCodec{pool: &r.pool}
	req := &pb.GetStepRequest{User: r.cfg.User, SessionId: id, Step: step, Slots: ks,
		MaxWaitMs: uint32(r.cfg.MaxWait.Milliseconds())}
	if !n.noBatch.Load() {
		stream, err := n.client.GetStepBatch(cctx, req, grpc.ForceCodecV2(codec))
		if err != nil {
			r.markDown(n, id)
			return missing()
		}
		for first := true; ; first = false {
			m := new(pb.OffloadSampleBatch)
			err := stream.RecvMsg(m)
			bufs := codec.take()
			if err != nil {
				for _, b := range bufs {
					r.pool.put(b)
				}
				if first && status.Code(err) == codes.Unimplemented {
					n.noBatch.Store(true) // an older node: one message per sample
					break
				}
				if !errors.Is(err, io.EOF) {
					r.markDown(n, id)
				}
				return missing()
			}
			for i, x := range m.GetSamples() {
				sb := newSharedBuf(bufs, i)
				r.takeSample(ctx, n, step, x, sb, got, st, slots)
				sb.release(&r.pool)
			}
		}
	}
	stream, err := n.client.GetStep(cctx, req, grpc.ForceCodecV2(codec))
	if err != nil {
		r.markDown(n, id)
		return missing()
	}
	for {
		m := new(pb.OffloadSample)
		err := stream.RecvMsg(m)
		sb := newSharedBuf(codec.take(), 0)
		if err != nil {
			sb.release(&r.pool)
			if !errors.Is(err, io.EOF) {
				r.markDown(n, id)
			}
			break
		}
		r.takeSample(ctx, n, step, m, sb, got, st, slots)
		sb.release(&r.pool)
	}
	return missing()
}

// sharedBuf is the pooled receive buffer a sample's frames alias. It goes back to the pool
// when its last holder lets go: the receiving loop, and the sample if it kept its frames
// (until Step.Release).
type sharedBuf struct {
	b    *[]byte
	refs atomic.Int32
}

// newSharedBuf holds bufs[i] (nil if there is none: the sample was decoded into ordinary
// memory) for the receiving loop.
func newSharedBuf(bufs []*[]byte, i int) *sharedBuf {
	sb := &sharedBuf{}
	if i < len(bufs) {
		sb.b = bufs[i]
	}
	sb.refs.Store(1)
	return sb
}

func (s *sharedBuf) hold() { s.refs.Add(1) }

func (s *sharedBuf) release(p *bufPool) {
	if s.refs.Add(-1) == 0 {
		p.put(s.b)
		s.b = nil
	}
}

// takeSample uses one sample a node sent for step: tensors are kept (aliasing sb), raw bytes
// are transformed here, an error fails the sample, UNAVAILABLE or refused tensors leave the
// slot for local work (not in got).
func (r *Reader) takeSample(ctx context.Context, n *node, step uint64, m *pb.OffloadSample, sb *sharedBuf, got map[int]bool, st *Step, slots []schedule.Slot) {
	k := int(m.GetSlot())
	if k < r.lo || k >= r.hi || got[k] || m.GetStep() != step {
		return
	}
	smp := st.at(k, r.lo)
	if smp == nil {
		return
	}
	if m.GetErrorCode() != 0 {
		if codes.Code(m.GetErrorCode()) == codes.Unavailable {
			return // the node could not read it: read it here
		}
		got[k] = true
		smp.Path = "offload"
		smp.Err = &SampleError{Step: step, Slot: k, Key: smp.Key, Err: status.Error(codes.Code(m.GetErrorCode()), m.GetError())}
		r.stats.add(&r.stats.errors, 1)
		return
	}
	frames := m.GetFrames()
	r.stats.add(&r.stats.bytesNodes, int64(len(frames)))
	kind, payload, domain, ferr := checkFrames(frames)
	switch {
	case ferr != nil:
		got[k] = true
		smp.Err = &SampleError{Step: step, Slot: k, Key: smp.Key, Err: fmt.Errorf("frames from %s: %w", n.addr, ferr)}
		r.stats.add(&r.stats.errors, 1)
	case kind == frame.KindRaw:
		got[k] = true
		smp.Path = "raw"
		r.sem <- struct{}{}
		r.transform(ctx, step, smp, slots[k], payload)
		<-r.sem
		r.stats.add(&r.stats.raw, 1)
	case domain != r.domain || r.rawOnly.Load():
		// Tensors made in another determinism domain, or arriving after the reader went
		// raw-only: never mixed in. The sample is read and transformed here.
		if domain != r.domain {
			r.goRawOnly(fmt.Sprintf("node %s (%s) sent tensors of determinism domain %q, the reader's is %q", n.addr, n.uuid, domain, r.domain))
		}
		r.stats.add(&r.stats.refused, 1)
	default:
		got[k] = true
		sl := slots[k]
		if err := matchMembers(r.srcs[sl.Source].ix, sl.Index, m.GetMembers()); err != nil {
			smp.Err = &SampleError{Step: step, Slot: k, Key: smp.Key, Err: fmt.Errorf("members from %s: %w", n.addr, err)}
			r.stats.add(&r.stats.errors, 1)
			return
		}
		sb.hold()
		smp.Path, smp.Frames, smp.buf = "offload", frames, sb
		smp.Members = membersFromProto(m.GetMembers())
		r.stats.add(&r.stats.offloaded, 1)
	}
}

// checkFrames verifies every NTXF frame of a sample, checksums included: exactly one raw frame
// (its payload is returned), or tensor frames only, all of one determinism domain (returned).
func checkFrames(b []byte) (kind frame.Kind, payload []byte, domain string, err error) {
	for i := 0; len(b) > 0; i++ {
		f, rest, err := frame.Parse(b)
		if err != nil {
			return 0, nil, "", err
		}
		switch {
		case i == 0:
			kind, payload, domain = f.Kind, f.Payload, f.Domain
		case kind == frame.KindRaw || f.Kind != frame.KindTensor:
			return 0, nil, "", fmt.Errorf("%w: a raw frame must be a sample's only frame", frame.ErrFormat)
		case f.Domain != domain:
			return 0, nil, "", fmt.Errorf("%w: frames of one sample name two determinism domains", frame.ErrFormat)
		}
		b = rest
	}
	if kind == 0 {
		return 0, nil, "", fmt.Errorf("%w: no frame", frame.ErrFormat)
	}
	return kind, payload, domain, nil
}

func (r *Reader) localSample(ctx context.Context, step uint64, smp *Sample, sl schedule.Slot) {
	src := r.srcs[sl.Source]
	ds := src.ix.Sample(sl.Index)
	smp.Path = "local"
	// The graph's input limit bounds the sample's byte range (every member), as on the nodes
	// (which answer RESOURCE_EXHAUSTED for it), before anything is read.
	if n, in := ds.GetLength(), src.graph.Limits.MaxInputBytes; n > in {
		smp.Err = &SampleError{Step: step, Slot: smp.Slot, Key: smp.Key,
			Err: fmt.Errorf("%w: %d bytes, more than the graph's input limit (%d)", xformgraph.ErrLimit, n, in)}
		r.stats.add(&r.stats.errors, 1)
		return
	}
	data, err := r.cfg.Store.ReadAt(ctx, src.ix.FilePath(int(ds.GetFile())), ds.GetOffset(), ds.GetLength())
	if err != nil {
		smp.Err = &SampleError{Step: step, Slot: smp.Slot, Key: smp.Key, Err: err}
		r.stats.add(&r.stats.errors, 1)
		return
	}
	r.stats.add(&r.stats.bytesHDFS, int64(len(data)))
	r.transform(ctx, step, smp, sl, data)
	r.stats.add(&r.stats.local, 1)
}

func (r *Reader) transform(ctx context.Context, step uint64, smp *Sample, sl schedule.Slot, data []byte) {
	start := time.Now()
	defer func() { r.stats.add(&r.stats.localNanos, int64(time.Since(start))) }()
	var members []dataset.Member
	frames, members, err := r.srcs[sl.Source].run(ctx, sl.Index, smp.Key, sl.Epoch, data)
	if err != nil {
		smp.Err = &SampleError{Step: step, Slot: smp.Slot, Key: smp.Key, Err: err}
		r.stats.add(&r.stats.errors, 1)
		return
	}
	smp.Frames, smp.Members = frames, members
}

// Transform runs a source's graph on a sample's bytes (its byte range in the index: every
// member) exactly as the reader does on fallback, for tests and tools that compare paths. It
// returns the frames; the members come with TransformSample.
func (r *Reader) Transform(ctx context.Context, source int, key string, epoch uint64, data []byte) ([]byte, error) {
	frames, _, err := r.TransformSample(ctx, source, key, epoch, data)
	return frames, err
}

// TransformSample is Transform with the sample's non-media members.
func (r *Reader) TransformSample(ctx context.Context, source int, key string, epoch uint64, data []byte) ([]byte, []dataset.Member, error) {
	i, ok := r.srcs[source].ix.Lookup(key)
	if !ok {
		return nil, nil, fmt.Errorf("%w: key %q", dataset.ErrNotFound, key)
	}
	return r.srcs[source].run(ctx, i, key, epoch, data)
}

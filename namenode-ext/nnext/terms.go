package nnext

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/newtricks/newtricks/namenode-ext/events"
	"github.com/newtricks/newtricks/namenode-ext/hotspot"
	"github.com/newtricks/newtricks/namenode-ext/mirror"
	"github.com/newtricks/newtricks/namenode-ext/nnhost"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// PositionXAttr is the xattr on Config.EventsStateDir that holds the event stream's
// acknowledged position on an HA nameservice: the NameNode hook's safe txid (every selected
// namespace event up to it is durable at namenode-ext, or was not selected), written by the
// namenode-ext of the active NameNode. The NameNode that becomes active next resumes the
// stream after it, reading the shared edit log.
const PositionXAttr = "user.newtricks.events.position"

// position is PositionXAttr's value.
type position struct {
	Txid     int64  `json:"txid"`
	NameNode string `json:"namenode,omitempty"`
	TimeMs   int64  `json:"time_ms"`
}

// termHost is what the terms call on the NameNode themselves (the position xattr).
type termHost interface {
	GetXAttrs(ctx context.Context, path string, who nnhost.Caller) (map[string][]byte, error)
	SetXAttr(ctx context.Context, path, name string, value []byte, who nnhost.Caller) error
}

// terms runs what acts on the NameNode (hints and their restores, reactive hints, the mirror's
// copies and commits) for each active term of the NameNode, as its hook reports them with
// every event batch: fresh subsystems for each term, which recover what earlier terms (of this
// NameNode or the other one of an HA pair) left in HDFS; none while the NameNode is not
// active, when the public calls that need it are answered UNAVAILABLE "standby". A NameNode
// without HA is active from its first batch on, for good.
type terms struct {
	ctx      context.Context
	host     termHost
	build    func(first bool) (*termParts, error)
	sink     *events.Sink
	log      hclog.Logger
	stateDir string
	persist  time.Duration
	nameNode string
	changes  chan struct{}

	mu       sync.Mutex
	state    events.NameNodeState
	known    bool
	cur      *term
	starting bool // a term is being started (cur is the one before, stopped)
	// activeAt is when the latest batch saying ACTIVE for a new term arrived; servingAt when
	// that term's subsystems were set up (for the figures in the log).
	activeAt time.Time
}

// termParts are one term's subsystems, built but not running.
type termParts struct {
	hotspot *hotspot.Manager
	mirror  *mirror.Engine // nil without mirror rules
	// reactive: hotspot consumes audited opens
	reactive bool
	// detach removes the subscriptions (and the mirror's cursor) attach made; nil until then.
	detach func()
}

// attach subscribes parts to the sink: hotspot to audited opens (reactive), the mirror to
// namespace events with a cursor of its own (nothing is durable until its journal is read).
// Before any event it must see: the first term's parts at Start, before the hook's first
// batch (a NameNode without HA streams from its first batch on); a later term's before the
// hook is told where to resume.
func (t *terms) attach(parts *termParts) {
	if parts.detach != nil {
		return
	}
	var undo []func()
	if parts.reactive {
		hs := parts.hotspot
		undo = append(undo, t.sink.Subscribe(func(e events.Event) {
			if a := e.Audit; a != nil && a.Allowed {
				hs.ObserveAudit(a.Cmd, a.Src, a.User, a.ClientIP, a.Time)
			}
		}))
	}
	if m := parts.mirror; m != nil {
		cursor := t.sink.NewCursor(-1)
		m.UseCursor(cursor)
		undo = append(undo, t.sink.Subscribe(m.Observe), cursor.Close)
	}
	parts.detach = func() {
		for _, f := range undo {
			f()
		}
	}
}

// term is one active term's running subsystems.
type term struct {
	n      int64
	parts  *termParts
	cancel context.CancelFunc
	done   chan struct{} // closed once every goroutine of the term returned
}

func newTerms(ctx context.Context, host termHost, sink *events.Sink, build func(bool) (*termParts, error),
	stateDir string, persist time.Duration, nameNode string, log hclog.Logger) *terms {
	t := &terms{ctx: ctx, host: host, sink: sink, build: build, stateDir: stateDir, persist: persist,
		nameNode: nameNode, log: log, changes: make(chan struct{}, 1)}
	sink.OnState(func(events.NameNodeState) {
		select {
		case t.changes <- struct{}{}:
		default:
		}
	})
	return t
}

// run follows the NameNode's state until ctx ends, starting and stopping terms.
func (t *terms) run(first *termParts) {
	for {
		select {
		case <-t.ctx.Done():
			t.stop()
			return
		case <-t.changes:
		}
		st := t.sink.State()
		t.mu.Lock()
		t.state, t.known = st, true
		cur := t.cur
		t.mu.Unlock()
		switch {
		case st.Active() && cur != nil && cur.n == st.Term:
			// the same term
		case st.Active():
			t.stop()
			t.mu.Lock()
			t.starting, t.activeAt = true, time.Now()
			t.mu.Unlock()
			parts := first
			first = nil
			if parts == nil {
				var err error
				if parts, err = t.build(false); err != nil {
					t.log.Error("cannot start the subsystems for this active term; namenode-ext answers UNAVAILABLE until the next one", "term", st.Term, "error", err)
					t.mu.Lock()
					t.starting = false
					t.mu.Unlock()
					continue
				}
			}
			t.start(st, parts)
		default:
			if cur != nil {
				t.log.Info("NameNode is not active: stopping hints and the mirror", "state", st.State.String(), "term", cur.n)
			}
			t.stop()
		}
	}
}

// start runs parts for the active term st.
func (t *terms) start(st events.NameNodeState, parts *termParts) {
	ctx, cancel := context.WithCancel(t.ctx)
	tm := &term{n: st.Term, parts: parts, cancel: cancel, done: make(chan struct{})}
	var wg sync.WaitGroup
	t.attach(parts) // before the hook is told where to resume (resumeAndPersist)
	hs := parts.hotspot
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := hs.Run(ctx); err != nil && ctx.Err() == nil {
			t.log.Error("hotspot stopped", "error", err)
		}
	}()
	if m := parts.mirror; m != nil {
		// The hook resumes the event stream after what the mirror's journal holds.
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := m.Run(ctx); err != nil && ctx.Err() == nil {
				t.log.Error("mirror stopped", "error", err)
			}
		}()
	}
	if st.HA {
		wg.Add(1)
		go func() { defer wg.Done(); t.resumeAndPersist(ctx, tm) }()
	}
	go func() { wg.Wait(); parts.detach(); close(tm.done) }()
	t.mu.Lock()
	t.cur, t.starting = tm, false
	since := time.Since(t.activeAt)
	t.mu.Unlock()
	t.log.Info("NameNode is active: hints and the mirror run for this term", "term", st.Term, "ha", st.HA,
		"since_reported_ms", since.Milliseconds())
}

// stop ends the running term, if any, and waits until its subsystems returned: two terms'
// subsystems never act at once.
func (t *terms) stop() {
	t.mu.Lock()
	tm := t.cur
	t.cur = nil
	t.mu.Unlock()
	if tm == nil {
		return
	}
	tm.cancel()
	for waited := 0; ; waited++ {
		select {
		case <-tm.done:
			return
		case <-time.After(10 * time.Second):
			t.log.Warn("the subsystems of the previous term have not stopped yet", "term", tm.n, "waited_s", 10*(waited+1))
		}
	}
}

// resumeAndPersist reads the stream's position from HDFS, tells the hook to resume there, and
// then keeps the hook's safe txid there while the term lasts.
func (t *terms) resumeAndPersist(ctx context.Context, tm *term) {
	after, err := t.readPosition(ctx)
	if err != nil {
		return // ctx ended
	}
	t.sink.Resume(tm.n, after)
	t.log.Info("namespace stream resumes after the position in HDFS", "term", tm.n, "after_txid", after, "dir", t.stateDir)
	saved := after
	tick := time.NewTicker(t.persist)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		term, safe := t.sink.Safe()
		if term != tm.n || safe <= saved {
			continue
		}
		v, _ := json.Marshal(position{Txid: safe, NameNode: t.nameNode, TimeMs: time.Now().UnixMilli()})
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := t.host.SetXAttr(cctx, t.stateDir, PositionXAttr, v, nnhost.AsService)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				t.log.Warn("cannot save the event stream position", "dir", t.stateDir, "txid", safe, "error", err)
			}
			continue
		}
		saved = safe
	}
}

// readPosition is the position in HDFS (-1: none recorded), retried until it is read or ctx
// ends.
func (t *terms) readPosition(ctx context.Context) (int64, error) {
	backoff := 100 * time.Millisecond
	for {
		// Short: a NameNode that just became active may hold its lock a while; ask again.
		cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		xs, err := t.host.GetXAttrs(cctx, t.stateDir, nnhost.AsService)
		cancel()
		if err == nil {
			raw, ok := xs[PositionXAttr]
			if !ok {
				return -1, nil
			}
			var p position
			if err := json.Unmarshal(raw, &p); err != nil || p.Txid < -1 {
				t.log.Warn("unreadable event stream position; the stream starts from the present", "dir", t.stateDir, "value", string(raw))
				return -1, nil
			}
			return p.Txid, nil
		}
		t.log.Info("reading the event stream position waits for the NameNode", "error", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

// current is the running term, nil if none.
func (t *terms) current() *term {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cur
}

// unavailable is the error of a call that needs an active term while none runs.
func (t *terms) unavailable() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.known && !t.state.Active() {
		return status.Errorf(codes.Unavailable, "standby: the NameNode beside this namenode-ext is %s, not active; call the active NameNode's namenode-ext",
			stateName(t.state.State))
	}
	return status.Error(codes.Unavailable, "namenode-ext is starting for its NameNode's active term; retry")
}

// gate answers a public call of a gated service while the NameNode is known not to be active.
func (t *terms) gate(method string) error {
	if !gatedMethod(method) {
		return nil
	}
	t.mu.Lock()
	standby := t.known && !t.state.Active()
	t.mu.Unlock()
	if standby {
		return t.unavailable()
	}
	return nil
}

// gatedMethod: the calls that need the active NameNode (hints, the mirror, locating files).
// Not gated: the DataNodeDirectory (every datanode-ext registers with both NameNodes'
// namenode-ext, so the one that becomes active already knows them) and RecentEvents (what
// this process received, for administrators).
func gatedMethod(m string) bool {
	if m == pb.Namespace_RecentEvents_FullMethodName {
		return false
	}
	for _, s := range []string{"/newtricks.v1.Hints/", "/newtricks.v1.Mirror/", "/newtricks.v1.Namespace/"} {
		if strings.HasPrefix(m, s) {
			return true
		}
	}
	return false
}

func stateName(s pb.NameNodeState) string {
	switch s {
	case pb.NameNodeState_NAMENODE_STATE_STANDBY:
		return "standby"
	case pb.NameNodeState_NAMENODE_STATE_ACTIVE:
		return "active"
	default:
		return "neither active nor standby"
	}
}

// collector reports the running term's subsystem metrics (none between terms). Unchecked:
// the metrics come and go with the terms.
type termCollector struct{ t *terms }

func (c termCollector) Describe(chan<- *prometheus.Desc) {}

func (c termCollector) Collect(ch chan<- prometheus.Metric) {
	tm := c.t.current()
	if tm == nil {
		return
	}
	for _, x := range tm.parts.hotspot.Collectors() {
		x.Collect(ch)
	}
	if tm.parts.mirror != nil {
		for _, x := range tm.parts.mirror.Collectors() {
			x.Collect(ch)
		}
	}
}

// hintsSwitch is the Hints service of the running term.
type hintsSwitch struct {
	pb.UnimplementedHintsServer
	t *terms
}

func (s hintsSwitch) get() (pb.HintsServer, error) {
	if tm := s.t.current(); tm != nil {
		return tm.parts.hotspot.GRPCServer(), nil
	}
	return nil, s.t.unavailable()
}

func (s hintsSwitch) Create(ctx context.Context, r *pb.CreateHintRequest) (*pb.HintPlan, error) {
	h, err := s.get()
	if err != nil {
		return nil, err
	}
	return h.Create(ctx, r)
}

func (s hintsSwitch) Status(ctx context.Context, r *pb.HintStatusRequest) (*pb.HintStatus, error) {
	h, err := s.get()
	if err != nil {
		return nil, err
	}
	return h.Status(ctx, r)
}

func (s hintsSwitch) Extend(ctx context.Context, r *pb.ExtendHintRequest) (*pb.HintStatus, error) {
	h, err := s.get()
	if err != nil {
		return nil, err
	}
	return h.Extend(ctx, r)
}

func (s hintsSwitch) Done(ctx context.Context, r *pb.DoneHintRequest) (*pb.HintStatus, error) {
	h, err := s.get()
	if err != nil {
		return nil, err
	}
	return h.Done(ctx, r)
}

func (s hintsSwitch) List(ctx context.Context, r *pb.ListHintsRequest) (*pb.ListHintsResponse, error) {
	h, err := s.get()
	if err != nil {
		return nil, err
	}
	return h.List(ctx, r)
}

// mirrorSwitch is the Mirror service of the running term.
type mirrorSwitch struct {
	pb.UnimplementedMirrorServer
	t *terms
}

func (s mirrorSwitch) get() (pb.MirrorServer, error) {
	if tm := s.t.current(); tm != nil && tm.parts.mirror != nil {
		return tm.parts.mirror.GRPCServer(), nil
	}
	return nil, s.t.unavailable()
}

func (s mirrorSwitch) Status(ctx context.Context, r *pb.MirrorStatusRequest) (*pb.MirrorStatusResponse, error) {
	m, err := s.get()
	if err != nil {
		return nil, err
	}
	return m.Status(ctx, r)
}

func (s mirrorSwitch) Wait(r *pb.MirrorWaitRequest, stream grpc.ServerStreamingServer[pb.CheckpointStatus]) error {
	m, err := s.get()
	if err != nil {
		return err
	}
	return m.Wait(r, stream)
}

func (s mirrorSwitch) Urgent(ctx context.Context, r *pb.MirrorUrgentRequest) (*pb.CheckpointStatus, error) {
	m, err := s.get()
	if err != nil {
		return nil, err
	}
	return m.Urgent(ctx, r)
}

func (s mirrorSwitch) Complete(ctx context.Context, r *pb.MirrorCompleteRequest) (*pb.CheckpointStatus, error) {
	m, err := s.get()
	if err != nil {
		return nil, err
	}
	return m.Complete(ctx, r)
}

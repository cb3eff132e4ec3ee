package events

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// Subscriber is called for every accepted event, on the delivering goroutine: it must not
// block (the NameNode hook waits for the acknowledgement). Hand slow work to your own queue.
type Subscriber func(Event)

// Sink implements the EventSink service.
type Sink struct {
	pb.UnimplementedEventSinkServer

	mu          sync.Mutex
	ring        []Event // recent events, oldest first once full
	next        int
	full        bool
	lastTxid    int64
	received    int64
	dropped     int64 // audit events the hook dropped, as it last reported
	subscribers []subscription
	nextSub     int
	interests   map[int]Interest
	cursors     map[int]*Cursor
	filterVer   int   // bumped when the union of interests changes
	sentVer     int   // filterVer the hook last received (Configure or an ack)
	resumes     int64 // batches that (re)started the hook's namespace stream
	resumeTxid  int64 // resume_txid of the latest such batch (0: none yet in this process)
	resumeFirst int64 // txid of that batch's first namespace event
	gapsTotal   int64 // the hook's namespace_gaps_total, as it last reported

	state       NameNodeState // the NameNode's HA state as the hook last reported it
	onState     func(NameNodeState)
	resumeTerm  int64 // the active term Resume was called for (0: none)
	resumeAfter int64
	safeTerm    int64 // the term of safeTxid
	safeTxid    int64 // the highest safe_txid the hook reported in safeTerm

	mReceived   *prometheus.CounterVec
	mAudit      prometheus.Counter // mReceived{kind="audit"}, resolved once: Deliver is hot
	mNamespace  prometheus.Counter
	mDuplicates prometheus.Counter
	mDropped    prometheus.Gauge
	mLastTxid   prometheus.Gauge
	mDurable    prometheus.Gauge
	mGaps       prometheus.Gauge
	mLatency    prometheus.Histogram
}

// NewSink keeps the last retain events for RecentEvents. lastTxid is the highest namespace
// txid already processed (-1 if none): older deliveries are ignored as duplicates.
func NewSink(retain int, lastTxid int64) *Sink {
	if retain < 1 {
		retain = 1
	}
	s := &Sink{
		ring:      make([]Event, retain),
		lastTxid:  lastTxid,
		interests: map[int]Interest{},
		cursors:   map[int]*Cursor{},
		state:     NameNodeState{State: -1}, // no batch yet: the first one is a change
		mReceived: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "newtricks", Subsystem: "events", Name: "received_total",
			Help: "Events accepted from the NameNode hook, by kind (audit, namespace).",
		}, []string{"kind"}),
		mDuplicates: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "newtricks", Subsystem: "events", Name: "duplicate_total",
			Help: "Namespace events delivered again after a retry and ignored.",
		}),
		mDropped: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "newtricks", Subsystem: "events", Name: "audit_dropped",
			Help: "Audit events the NameNode hook dropped because its queue was full (since NameNode start).",
		}),
		mLastTxid: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "newtricks", Subsystem: "events", Name: "last_txid",
			Help: "Highest inotify txid received.",
		}),
		mDurable: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "newtricks", Subsystem: "events", Name: "durable_txid",
			Help: "Namespace txid up to which every event is durable here (acknowledged to the hook).",
		}),
		mGaps: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "newtricks", Subsystem: "events", Name: "namespace_gaps",
			Help: "Times the NameNode hook found edits purged and skipped namespace events (since NameNode start).",
		}),
		mLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "newtricks", Subsystem: "events", Name: "namespace_delay_seconds",
			Help:    "CLOSE events: NameNode close time to arrival here.",
			Buckets: []float64{.005, .01, .025, .05, .1, .2, .5, 1, 2, 5, 10},
		}),
	}
	s.mAudit = s.mReceived.WithLabelValues("audit")
	s.mNamespace = s.mReceived.WithLabelValues("namespace")
	return s
}

// Collectors returns the sink's metrics.
func (s *Sink) Collectors() []prometheus.Collector {
	return []prometheus.Collector{s.mReceived, s.mDuplicates, s.mDropped, s.mLastTxid, s.mDurable, s.mGaps, s.mLatency}
}

// Subscribe adds fn to the subscribers; it sees the events accepted from then on until the
// returned function removes it. The hook forwards only what some Interest asked for (see
// Want): a subscriber must also Want what it consumes.
func (s *Sink) Subscribe(fn Subscriber) (unsubscribe func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.nextSub
	s.nextSub++
	s.subscribers = append(s.subscribers, subscription{id: id, fn: fn})
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for i, sub := range s.subscribers {
			if sub.id == id {
				s.subscribers = append(s.subscribers[:i:i], s.subscribers[i+1:]...)
				return
			}
		}
	}
}

type subscription struct {
	id int
	fn Subscriber
}

// Deliver accepts one batch. Namespace events at or below the last txid are duplicates of an
// earlier delivery (a retry whose acknowledgement was lost, or the hook resuming after the last
// durable txid) and are skipped, so each subscriber sees each namespace event once per process.
func (s *Sink) Deliver(ctx context.Context, b *pb.EventBatch) (*pb.DeliverAck, error) {
	ack, changed, fn := s.deliver(b)
	if changed && fn != nil {
		fn(NameNodeState{State: b.GetNamenodeState(), Term: b.GetActiveTerm(), HA: b.GetHa()})
	}
	return ack, nil
}

func (s *Sink) deliver(b *pb.EventBatch) (_ *pb.DeliverAck, stateChanged bool, onState func(NameNodeState)) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := (NameNodeState{State: b.GetNamenodeState(), Term: b.GetActiveTerm(), HA: b.GetHa()}); st != s.state {
		s.state, stateChanged = st, true
	}
	if t := b.GetActiveTerm(); t > 0 && t == s.resumeTerm && b.GetSafeTxid() > s.safeTxid {
		s.safeTerm, s.safeTxid = t, b.GetSafeTxid()
	}
	s.dropped = b.GetAuditDroppedTotal()
	s.mDropped.Set(float64(s.dropped))
	s.mGaps.Set(float64(b.GetNamespaceGapsTotal()))
	if b.GetResumeTxid() > 0 {
		s.resumes++
		s.resumeTxid, s.resumeFirst = b.GetResumeTxid(), 0
		for _, pe := range b.GetEvents() {
			if n := pe.GetNamespace(); n != nil {
				s.resumeFirst = n.GetTxid()
				break
			}
		}
	}
	s.gapsTotal = b.GetNamespaceGapsTotal()
	for _, pe := range b.GetEvents() {
		ev, ok := fromProto(pe, now)
		if !ok {
			continue
		}
		if ns := ev.Namespace; ns != nil {
			if ns.Txid <= s.lastTxid {
				s.mDuplicates.Inc()
				continue
			}
			s.lastTxid = ns.Txid
			s.mNamespace.Inc()
			if ns.Type == "CLOSE" && !ns.Time.IsZero() {
				s.mLatency.Observe(now.Sub(ns.Time).Seconds())
			}
		} else {
			s.mAudit.Inc()
		}
		s.received++
		s.ring[s.next] = ev
		s.next = (s.next + 1) % len(s.ring)
		s.full = s.full || s.next == 0
		for _, sub := range s.subscribers {
			sub.fn(ev)
		}
	}
	s.mLastTxid.Set(float64(s.lastTxid))
	durable := s.durableLocked()
	s.mDurable.Set(float64(durable))
	ack := &pb.DeliverAck{LastTxid: s.lastTxid, DurableTxid: durable}
	if s.sentVer != s.filterVer {
		ack.Filter = s.filterLocked()
		s.sentVer = s.filterVer
	}
	if s.resumeTerm > 0 {
		ack.ResumeTerm, ack.ResumeAfterTxid = s.resumeTerm, s.resumeAfter
	}
	return ack, stateChanged, s.onState
}

// NameNodeState is the NameNode's HA state as its hook reports it with every batch.
type NameNodeState struct {
	State pb.NameNodeState
	// Term counts the times the hook saw its NameNode become active (the current one while
	// active).
	Term int64
	// HA: the NameNode is one of an HA nameservice (the hook waits for Resume each term).
	HA bool
}

// Active reports whether the NameNode is active; a hook that does not report its state
// (UNSPECIFIED) runs a NameNode without HA, always active.
func (st NameNodeState) Active() bool {
	return st.State == pb.NameNodeState_NAMENODE_STATE_ACTIVE || st.State == pb.NameNodeState_NAMENODE_STATE_UNSPECIFIED
}

// OnState sets the function called after a Deliver whose NameNode state (state, term, HA)
// differs from the previous batch's, on the delivering goroutine: it must not block.
func (s *Sink) OnState(fn func(NameNodeState)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onState = fn
}

// State is the NameNode state of the latest batch (zero before the first).
func (s *Sink) State() NameNodeState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// Resume tells the hook, in every acknowledgement from now on, that the namespace stream of
// its active term term restarts after txid after (-1: from the present): the position kept in
// HDFS. The sink accepts every namespace event above after again: this term's subscribers are
// new.
func (s *Sink) Resume(term, after int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resumeTerm, s.resumeAfter = term, after
	s.lastTxid = after
	s.safeTerm, s.safeTxid = term, after
}

// Safe is the hook's safe_txid of the resumed term: every selected namespace event up to it is
// durable here (or was not selected). term is 0 before a Resume.
func (s *Sink) Safe() (term, txid int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.safeTerm, s.safeTxid
}

// durableLocked is the txid up to which every namespace event is durable: handled by every
// subscriber (they run synchronously in Deliver) and marked by every Cursor.
func (s *Sink) durableLocked() int64 {
	d := s.lastTxid
	for _, c := range s.cursors {
		d = min(d, c.mark)
	}
	return d
}

// SetRetain changes how many recent events are kept, keeping the newest ones.
func (s *Sink) SetRetain(retain int) {
	if retain < 1 {
		retain = 1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if retain == len(s.ring) {
		return
	}
	old := s.orderedLocked()
	if len(old) > retain {
		old = old[len(old)-retain:]
	}
	s.ring = make([]Event, retain)
	s.next = copy(s.ring, old) % retain
	s.full = len(old) == retain
}

func (s *Sink) orderedLocked() []Event {
	if s.full {
		return append(append([]Event(nil), s.ring[s.next:]...), s.ring[:s.next]...)
	}
	return append([]Event(nil), s.ring[:s.next]...)
}

// Stats returns the last txid, the number of accepted events and the hook's drop total.
func (s *Sink) Stats() (lastTxid, received, auditDropped int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastTxid, s.received, s.dropped
}

// Recent returns up to limit of the newest retained events (all if limit <= 0) whose path or
// destination starts with prefix, oldest first.
func (s *Sink) Recent(limit int, prefix string) []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Event
	for _, e := range s.orderedLocked() {
		if prefix == "" || strings.HasPrefix(e.Path(), prefix) || (e.Dst() != "" && strings.HasPrefix(e.Dst(), prefix)) {
			out = append(out, e)
		}
	}
	if limit > 0 && len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out
}

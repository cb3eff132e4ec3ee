package hotspot

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the manager's Prometheus collectors, all named newtricks_hotspot_*.
type metrics struct {
	created          *prometheus.CounterVec // kind: explicit|implicit
	finished         *prometheus.CounterVec // outcome: expired|done|cancelled
	restores         *prometheus.CounterVec // result: restored|external|gone
	hostErrors       *prometheus.CounterVec // op
	hostCalls        *prometheus.CounterVec // op
	hostSeconds      *prometheus.CounterVec // op
	fileErrors       *prometheus.CounterVec // code
	problems         prometheus.Gauge
	markersRejected  prometheus.Counter
	recoverySkipped  *prometheus.CounterVec
	quotaRefused     prometheus.Counter
	readySeconds     prometheus.Histogram
	bytesPlanned     prometheus.Counter
	boosted          prometheus.Gauge
	reactiveTriggers prometheus.Counter
	reactiveDropped  prometheus.Counter
	active           prometheus.GaugeFunc
	filesHeld        prometheus.GaugeFunc
}

func newMetrics(m *Manager) *metrics {
	const ns, sub = "newtricks", "hotspot"
	return &metrics{
		created: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "hints_created_total", Help: "Hints created, by kind (explicit, implicit)."}, []string{"kind"}),
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "hints_finished_total", Help: "Hints whose files were restored, by outcome (expired, done, cancelled)."}, []string{"outcome"}),
		restores: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "file_restores_total", Help: "Files let go by a hint, by result (restored; external: factor changed by someone else, left as is; gone: deleted)."}, []string{"result"}),
		hostErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "host_errors_total", Help: "Failed calls to the NameNode host service, by operation."}, []string{"op"}),
		hostCalls: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "host_calls_total", Help: "Batched calls to the NameNode host service by the background work, by operation."}, []string{"op"}),
		hostSeconds: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "host_call_seconds_total", Help: "Time spent in the calls of host_calls_total, by operation."}, []string{"op"}),
		fileErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "file_change_errors_total", Help: "Per-file factor changes the NameNode refused, by gRPC code (ABORTED: changed by someone else)."}, []string{"code"}),
		problems: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub,
			Name: "state_problems", Help: "Hint records or file markers recovery could not decode (left in place; see the log or hint list)."}),
		markersRejected: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "markers_rejected_total", Help: "File markers recovery did not believe (undecodable, or disagreeing with the hint records namenode-ext wrote): the file was skipped, its factor left as is."}),
		recoverySkipped: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "recovery_files_skipped_total", Help: "Files recovery left as they are while it went on with the others, by reason (marker, change refused)."}, []string{"reason"}),
		quotaRefused: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "hints_refused_per_user_total", Help: "Hint creations (dry runs included) refused because the user had newtricks.hotspot.max-active-hints.per-user hints."}),
		readySeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub,
			Name: "ready_seconds", Help: "Time from hint creation until every file had its target replicas.",
			Buckets: prometheus.ExponentialBuckets(0.5, 2, 12)}),
		bytesPlanned: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "bytes_planned_total", Help: "Bytes of extra replicas planned by created hints."}),
		boosted: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub,
			Name: "limits_boosted", Help: "1 while the NameNode re-replication limits are raised."}),
		reactiveTriggers: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "reactive_triggers_total", Help: "Files that reached K distinct openers within W."}),
		reactiveDropped: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "reactive_dropped_total", Help: "Open events or triggers dropped because the tracker or queue was full."}),
		active: prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub,
			Name: "hints_active", Help: "Hints not yet restored."}, func() float64 {
			m.mu.Lock()
			defer m.mu.Unlock()
			return float64(len(m.hints))
		}),
		filesHeld: prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub,
			Name: "files_held", Help: "Files held at a raised factor by at least one hint."}, func() float64 {
			m.mu.Lock()
			defer m.mu.Unlock()
			return float64(len(m.files))
		}),
	}
}

// Collectors returns the manager's Prometheus collectors for the co-process registry.
func (m *Manager) Collectors() []prometheus.Collector {
	x := m.metrics
	return []prometheus.Collector{x.created, x.finished, x.restores, x.hostErrors, x.hostCalls, x.hostSeconds, x.fileErrors, x.problems, x.markersRejected, x.recoverySkipped, x.quotaRefused, x.readySeconds,
		x.bytesPlanned, x.boosted, x.reactiveTriggers, x.reactiveDropped, x.active, x.filesHeld}
}

// called counts one host call of op that started at start.
func (m *Manager) called(op string, start time.Time) {
	m.metrics.hostCalls.WithLabelValues(op).Inc()
	m.metrics.hostSeconds.WithLabelValues(op).Add(time.Since(start).Seconds())
}

package mirror

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	bytes, copies, retries, committed, failed, recopies prometheus.Counter
	destFull, relists                                   prometheus.Counter
	refused, retentionSkipped                           prometheus.Counter
	lag                                                 prometheus.Histogram
	gauges                                              []prometheus.Collector
}

func newMetrics(e *Engine) *metrics {
	c := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: "newtricks", Subsystem: "mirror", Name: name, Help: help})
	}
	g := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "newtricks", Subsystem: "mirror", Name: name, Help: help}, f)
	}
	m := &metrics{
		bytes:            c("bytes_total", "Bytes streamed to dc-b (every attempt)."),
		copies:           c("file_copies_total", "File transfer attempts finished (success or not)."),
		retries:          c("retries_total", "File transfers that failed and were retried."),
		committed:        c("checkpoints_committed_total", "Checkpoints committed on dc-b."),
		failed:           c("checkpoints_failed_total", "Checkpoints that failed."),
		recopies:         c("recopies_total", "Files copied again although the journal had them verified (should stay 0)."),
		destFull:         c("dest_full_total", "Transfers and commits dc-b refused for a space or namespace quota or a lack of space (retried)."),
		relists:          c("relists_total", "Active checkpoints listed again after a restart because the event stream could not resume where the journal ended."),
		refused:          c("requests_refused_total", "Urgent, Complete and Wait calls refused for access or a per-user or total bound, and checkpoints not mirrored for their owner (the superuser, or one over newtricks.mirror.max-checkpoints.per-user)."),
		retentionSkipped: c("retention_skipped_total", "Old mirrors retention left on dc-b because their destination no longer held the manifest this mirror committed for that owner."),
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "newtricks", Subsystem: "mirror",
			Name: "commit_lag_seconds", Help: "From complete on dc-a to committed on dc-b.",
			Buckets: prometheus.ExponentialBuckets(0.05, 2, 16)}),
	}
	m.gauges = []prometheus.Collector{
		g("bytes_in_flight", "Bytes streamed by transfers not yet finished.", func() float64 { return float64(e.inFlightB.Load()) }),
		g("files_in_flight", "Transfers in flight.", func() float64 {
			e.mu.Lock()
			defer e.mu.Unlock()
			n := 0
			for _, c := range e.ckpts {
				n += c.inFlight
			}
			return float64(n)
		}),
		g("link_bytes_per_second", "Bytes per second sent to dc-b over the last seconds.", func() float64 { return e.linkRate.rate() }),
		g("link_utilization", "link_bytes_per_second / newtricks.mirror.bandwidth (0 when uncapped).", func() float64 {
			if e.cfg.Bandwidth <= 0 {
				return 0
			}
			return e.linkRate.rate() / float64(e.cfg.Bandwidth)
		}),
		g("events_dropped", "Namespace events dropped because the mirror's queue was full.", func() float64 { return float64(e.dropped.Load()) }),
	}
	return m
}

// Collectors returns the mirror's metrics for the co-process registry.
func (e *Engine) Collectors() []prometheus.Collector {
	m := e.metrics
	return append([]prometheus.Collector{m.bytes, m.copies, m.retries, m.committed, m.failed, m.recopies, m.destFull, m.relists, m.refused, m.retentionSkipped, m.lag}, m.gauges...)
}

// meter turns a cumulative byte count sampled periodically into a rate over the last window.
type meter struct {
	mu      sync.Mutex
	samples []sample
}

type sample struct {
	t time.Time
	v int64
}

const meterWindow = 3 * time.Second

func (m *meter) sample(t time.Time, v int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.samples = append(m.samples, sample{t, v})
	i := 0
	for i < len(m.samples)-1 && t.Sub(m.samples[i].t) > meterWindow {
		i++
	}
	m.samples = m.samples[i:]
}

func (m *meter) rate() float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.samples) < 2 {
		return 0
	}
	a, b := m.samples[0], m.samples[len(m.samples)-1]
	d := b.t.Sub(a.t).Seconds()
	if d <= 0 {
		return 0
	}
	return float64(b.v-a.v) / d
}

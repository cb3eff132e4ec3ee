package offload

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/newtricks/newtricks/datanode-ext/governor"
)

// Metrics exports the offload service on datanode-ext's /metrics
// (newtricks_offload_*): sessions, samples answered by result, per-sample errors by code,
// bytes sent, the transform time per sample, the queue, the governor (shedding, CPU, thresholds)
// and peer reads. Everything but the histogram is read from one snapshot of the session
// manager and the governor at scrape time.
type Metrics struct {
	mgr *Manager
	gov *governor.Governor

	transform prometheus.Histogram

	sessions, sessionsOpened, domainMismatch                        *prometheus.Desc
	samples, sampleErrors, sentBytes                                *prometheus.Desc
	queueBytes, queueMaxBytes, queueJobs, workers                   *prometheus.Desc
	shedding, cpuOther, cpuOwn, thresholdHigh, thresholdLow, shedTx *prometheus.Desc
	peerReads, peerReadBytes, rangesServed, rangeBytesServed        *prometheus.Desc
	corruptReplicas, corruptReads, badBlockReports                  *prometheus.Desc
	readWaits, panics, sessionsRefused                              *prometheus.Desc
}

// NewMetrics returns the offload collectors of mgr and gov; Observe is the manager's
// Options.Transformed hook.
func NewMetrics(mgr *Manager, gov *governor.Governor) *Metrics {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName("newtricks", "offload", name), help, labels, nil)
	}
	return &Metrics{
		mgr: mgr, gov: gov,
		transform: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "newtricks", Subsystem: "offload",
			Name: "transform_seconds", Help: "Time a transform worker took to read and transform one sample.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 14)}),
		sessions:         d("sessions", "Offload sessions open."),
		sessionsOpened:   d("sessions_opened_total", "Offload sessions opened, by mode: tensor (the node transforms) or raw_only (the reader transforms everything).", "mode"),
		domainMismatch:   d("sessions_domain_mismatch_total", "Sessions opened by a reader whose determinism domain differs from this node's."),
		samples:          d("samples_total", "Samples answered to readers, by result: transformed (tensors), raw (encoded bytes for the reader to transform), error.", "result"),
		sampleErrors:     d("sample_errors_total", "Per-sample errors answered to readers, by gRPC code.", "code"),
		sentBytes:        d("sent_bytes_total", "Frame bytes of the samples answered to readers."),
		queueBytes:       d("queue_bytes", "Transformed bytes held ready for readers."),
		queueMaxBytes:    d("queue_max_bytes", "Cap of queue_bytes (newtricks.datanode.ext.offload.queue.max.bytes)."),
		queueJobs:        d("queue_jobs", "Samples of prepared steps waiting for a transform worker."),
		workers:          d("workers", "Transform workers (the CPU budget in cores)."),
		shedding:         d("shedding", "1 while the governor sheds (samples are answered raw), else 0."),
		cpuOther:         d("cpu_other", "Share of the node's CPUs used by everything but datanode-ext over the last governor interval (0..1)."),
		cpuOwn:           d("cpu_own", "Share of the node's CPUs used by datanode-ext over the last governor interval (0..1)."),
		thresholdHigh:    d("cpu_threshold_high", "Governor: shed above this cpu_other."),
		thresholdLow:     d("cpu_threshold_low", "Governor: stop shedding below this cpu_other."),
		shedTx:           d("shed_transitions_total", "Times the governor started or stopped shedding."),
		peerReads:        d("peer_reads_total", "Pieces of samples read from another member's DataNode (ReadRange), by result.", "result"),
		peerReadBytes:    d("peer_read_bytes_total", "Bytes read from other members' DataNodes."),
		rangesServed:     d("ranges_served_total", "ReadRange calls this node answered (pieces for peers)."),
		rangeBytesServed: d("range_bytes_served_total", "Bytes this node answered to ReadRange calls."),
		corruptReplicas:  d("corrupt_replicas_total", "Local replicas found not to match their block's checksum file (.meta) when read for offload, a ReadRange or Replicas.Read; each is reported to the NameNode once."),
		corruptReads:     d("corrupt_reads_total", "Reads of a local replica that failed its checksums (the range was read from another replica, or refused)."),
		badBlockReports:  d("bad_block_reports_total", "Corrupt replicas reported to the NameNode through the DataNode (DataNode.reportBadBlocks), by result.", "result"),
		readWaits:        d("read_waits_total", "Raw reads, Replicas.Read and ReadRange calls that waited for one of reads.max slots."),
		panics:           d("panics_total", "Panics recovered while working on a request: the sample or session failed, the process did not."),
		sessionsRefused:  d("sessions_refused_total", "OpenSession calls refused at sessions.max or sessions.max.per.user."),
	}
}

// Observe records one sample's read and transform time (the manager's Transformed hook).
func (m *Metrics) Observe(d time.Duration) { m.transform.Observe(d.Seconds()) }

// Collectors are what datanode-ext registers.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m, m.transform}
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{m.sessions, m.sessionsOpened, m.domainMismatch, m.samples, m.sampleErrors,
		m.sentBytes, m.queueBytes, m.queueMaxBytes, m.queueJobs, m.workers, m.shedding, m.cpuOther, m.cpuOwn,
		m.thresholdHigh, m.thresholdLow, m.shedTx, m.peerReads, m.peerReadBytes, m.rangesServed, m.rangeBytesServed,
		m.corruptReplicas, m.corruptReads, m.badBlockReports, m.readWaits, m.panics, m.sessionsRefused} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	c := m.mgr.Counters()
	cfg := m.mgr.Config()
	g := m.gov.Status()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge(m.sessions, float64(c.Sessions))
	counter(m.sessionsOpened, c.SessionsOpened-c.SessionsRawOnly, "tensor")
	counter(m.sessionsOpened, c.SessionsRawOnly, "raw_only")
	counter(m.domainMismatch, c.DomainMismatches)
	counter(m.samples, c.Transformed, "transformed")
	counter(m.samples, c.Raw, "raw")
	counter(m.samples, c.Errors, "error")
	for _, code := range SampleCodes {
		counter(m.sampleErrors, c.ErrorsByCode[code], code.String())
	}
	counter(m.sentBytes, c.SentBytes)
	gauge(m.queueBytes, float64(c.QueuedBytes))
	gauge(m.queueMaxBytes, float64(cfg.QueueMaxBytes))
	gauge(m.queueJobs, float64(c.QueuedJobs))
	gauge(m.workers, float64(cfg.Workers))
	shed := 0.0
	if g.Shedding {
		shed = 1
	}
	gauge(m.shedding, shed)
	gauge(m.cpuOther, g.Other)
	gauge(m.cpuOwn, g.Own)
	gauge(m.thresholdHigh, g.High)
	gauge(m.thresholdLow, g.Low)
	counter(m.shedTx, g.Transitions)
	counter(m.peerReads, c.PeerReads-c.PeerReadErrors, "ok")
	counter(m.peerReads, c.PeerReadErrors, "error")
	counter(m.peerReadBytes, c.PeerReadBytes)
	counter(m.rangesServed, c.RangesServed)
	counter(m.rangeBytesServed, c.RangeBytesServed)
	counter(m.corruptReplicas, c.CorruptReplicas)
	counter(m.corruptReads, c.CorruptReads)
	counter(m.badBlockReports, c.BadBlocksReported, "ok")
	counter(m.badBlockReports, c.BadBlockReportErrors, "error")
	counter(m.readWaits, c.ReadWaits)
	counter(m.panics, c.Panics)
	counter(m.sessionsRefused, c.SessionsRefused)
}

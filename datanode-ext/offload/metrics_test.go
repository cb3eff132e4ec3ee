package offload

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/newtricks/newtricks/datanode-ext/governor"
)

// TestOffloadMetricsExported: every offload metric is on /metrics from start (labelled ones
// with all their label values at zero), so that dashboards and alerts see them before the
// first session.
func TestOffloadMetricsExported(t *testing.T) {
	gov, err := governor.New(governor.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := NewManager(Config{}, Options{Gov: gov, Self: func() string { return "dn" }})
	if err != nil {
		t.Fatal(err)
	}
	m := NewMetrics(mgr, gov)
	reg := prometheus.NewRegistry()
	reg.MustRegister(m.Collectors()...)
	m.Observe(20 * time.Millisecond)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, f := range fams {
		got[f.GetName()] = len(f.GetMetric())
	}
	want := map[string]int{
		"newtricks_offload_sessions": 1, "newtricks_offload_sessions_opened_total": 2,
		"newtricks_offload_sessions_domain_mismatch_total": 1, "newtricks_offload_samples_total": 3,
		"newtricks_offload_sample_errors_total": len(SampleCodes), "newtricks_offload_sent_bytes_total": 1,
		"newtricks_offload_transform_seconds": 1, "newtricks_offload_queue_bytes": 1,
		"newtricks_offload_queue_max_bytes": 1, "newtricks_offload_queue_jobs": 1, "newtricks_offload_workers": 1,
		"newtricks_offload_shedding": 1, "newtricks_offload_cpu_other": 1, "newtricks_offload_cpu_own": 1,
		"newtricks_offload_cpu_threshold_high": 1, "newtricks_offload_cpu_threshold_low": 1,
		"newtricks_offload_shed_transitions_total": 1, "newtricks_offload_peer_reads_total": 2,
		"newtricks_offload_peer_read_bytes_total": 1, "newtricks_offload_ranges_served_total": 1,
		"newtricks_offload_range_bytes_served_total": 1, "newtricks_offload_corrupt_replicas_total": 1,
		"newtricks_offload_corrupt_reads_total": 1, "newtricks_offload_bad_block_reports_total": 2,
		"newtricks_offload_read_waits_total": 1, "newtricks_offload_panics_total": 1,
		"newtricks_offload_sessions_refused_total": 1,
	}
	var missing []string
	for name, n := range want {
		if got[name] != n {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("metrics missing or with other series counts: %s (have %v)", strings.Join(missing, ", "), got)
	}
	if len(got) != len(want) {
		t.Errorf("%d offload metric families, want %d: %v", len(got), len(want), got)
	}
}

package docs

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestDashboardParses(t *testing.T) {
	qs, err := DashboardQueries("grafana/newtricks.json")
	if err != nil {
		t.Fatal(err)
	}
	ms := AllMetrics(qs)
	t.Logf("%d queries over %d metrics: %v", len(qs), len(ms), ms)
	for _, want := range []string{"newtricks_events_received_total", "newtricks_events_audit_dropped",
		"newtricks_hotspot_hints_active", "newtricks_hotspot_ready_seconds", "process_start_time_seconds",
		"newtricks_mirror_commit_lag_seconds", "newtricks_offload_samples_total", "newtricks_offload_shedding"} {
		found := false
		for _, m := range ms {
			found = found || m == want
		}
		if !found {
			t.Errorf("dashboard does not show %s", want)
		}
	}
}

func TestExprMetrics(t *testing.T) {
	got := exprMetrics(`histogram_quantile(0.9, sum by (le) (rate(newtricks_hotspot_ready_seconds_bucket{job=~"$job",x="go_fake_label"}[5m]))) / process_start_time_seconds`)
	want := []string{"newtricks_hotspot_ready_seconds", "process_start_time_seconds"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestDashboardRejects(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"no-metric.json":     `{"title":"t","uid":"u","panels":[{"id":1,"type":"timeseries","title":"p","datasource":{"uid":"x"},"targets":[{"expr":"up"}]}]}`,
		"dup-id.json":        `{"title":"t","uid":"u","panels":[{"id":1,"type":"stat","title":"a","datasource":{"uid":"x"},"targets":[{"expr":"go_goroutines"}]},{"id":1,"type":"stat","title":"b","datasource":{"uid":"x"},"targets":[{"expr":"go_goroutines"}]}]}`,
		"no-datasource.json": `{"title":"t","uid":"u","panels":[{"id":1,"type":"stat","title":"a","targets":[{"expr":"go_goroutines"}]}]}`,
		"not-json.json":      `{"title":`,
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		if _, err := DashboardQueries(p); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

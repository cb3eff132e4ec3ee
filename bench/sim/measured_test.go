package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every case bench-hotspot measures has a model, and the committed measurement (make
// bench-sim's default -from) has both configurations.
func TestMeasuredFile(t *testing.T) {
	for _, cs := range []string{"rep3", "setrep-storm", "setrep-ahead", "hint", "balanced-only", "replication-only"} {
		if _, ok := simCase(cs, 12, 10); !ok {
			t.Errorf("no model of case %s", cs)
		}
	}
	m, err := loadMeasured("measured.json")
	if err != nil {
		t.Fatal(err)
	}
	if m.Phase("calibrate") == nil || m.Phase("check") == nil || m.Commit == "" {
		t.Fatalf("measured.json: want a calibrate and a check configuration and a commit: %+v", m)
	}
}

func TestLoadMeasuredRefuses(t *testing.T) {
	dir := t.TempDir()
	good := `{"phases":[{"role":"calibrate","datanodes":12,"dn_bandwidth":16777216,"readers":32,"files":4,"file_bytes":16777216,"block_size":8388608,"redundancy_interval_s":1,"lead_s":10,"factor":12,"barrier_s":{"rep3":[45,44,46]}}]}`
	for name, tc := range map[string]struct{ body, want string }{
		"good":     {good, ""},
		"not json": {"{", "unexpected end"},
		"case":     {strings.Replace(good, `"rep3"`, `"rep4"`, 1), `unknown case "rep4"`},
		"nodes":    {strings.Replace(good, `"datanodes":12`, `"datanodes":1`, 1), "1 DataNodes"},
		"median":   {strings.Replace(good, `[45,44,46]`, `[0,0,0]`, 1), "median 0"},
		"setup":    {strings.Replace(good, `"readers":32`, `"readers":0`, 1), "out of range"},
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".json")
		if err := os.WriteFile(p, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := loadMeasured(p)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: err %v, want %q", name, err, tc.want)
		}
	}
	if _, err := loadMeasured(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("a missing file was accepted")
	}
}

package reader_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/newtricks/newtricks/dataset"
	"github.com/newtricks/newtricks/harness/datasets"
	"github.com/newtricks/newtricks/reader"
	"github.com/newtricks/newtricks/schedule"
)

// checkMembers: a sample's non-media members on any path equal the local path's, and are what
// the harness wrote (a tar image sample of the fixture has a label, metadata and a caption; a
// clip shard a label; a single file none). Every comparison of paths (compare) runs it.
func checkMembers(t *testing.T, what string, g, w reader.Sample) {
	t.Helper()
	if g.Err != nil {
		return
	}
	names := func(s reader.Sample) []string {
		var out []string
		for _, m := range s.Members {
			out = append(out, m.Name)
		}
		return out
	}
	if !slices.Equal(names(g), names(w)) {
		t.Fatalf("%s: sample %q (%s): members %v, local %v", what, g.Key, g.Path, names(g), names(w))
	}
	for i, m := range g.Members {
		if string(m.Data) != string(w.Members[i].Data) {
			t.Fatalf("%s: sample %q (%s): member %q is %q, local %q", what, g.Key, g.Path, m.Name, m.Data, w.Members[i].Data)
		}
	}
	if strings.HasPrefix(g.Key, "single/") {
		if len(g.Members) != 0 {
			t.Fatalf("%s: single file %q has members %v", what, g.Key, names(g))
		}
		return
	}
	var shard, j int
	fmt.Sscanf(g.Key, "s%03d/%06d", &shard, &j)
	cls, ok := g.Member("cls")
	if !ok || string(cls) != fmt.Sprint(datasets.Label(j)) {
		t.Fatalf("%s: sample %q (%s): label %q, want %d (members %v)", what, g.Key, g.Path, cls, datasets.Label(j), names(g))
	}
	if g.Source == 0 { // the image source has captions
		txt, _ := g.Member("txt")
		if string(txt) != datasets.Caption(g.Key, j) {
			t.Fatalf("%s: sample %q (%s): caption %q", what, g.Key, g.Path, txt)
		}
		v, err := reader.Decode("json", mustMember(t, g, "json"))
		if m, ok := v.(map[string]any); err != nil || !ok || m["key"] != g.Key {
			t.Fatalf("%s: sample %q: json %v %v", what, g.Key, v, err)
		}
	}
}

func mustMember(t *testing.T, s reader.Sample, name string) []byte {
	t.Helper()
	b, ok := s.Member(name)
	if !ok {
		t.Fatalf("sample %q has no member %q", s.Key, name)
	}
	return b
}

// TestMembersOnEveryPath: labels, captions and metadata travel with the tensors when the
// nodes transform (offload), when they shed (raw: the reader cuts the members out of the
// sample's bytes) and when a node is gone (HDFS), and equal the local path's (compare checks
// every sample with checkMembers).
func TestMembersOnEveryPath(t *testing.T) {
	fx := newFixture(t, nil)
	local := steps(t, fx.open(t, 0, 0, false, nil), 9)
	paths := compare(t, "offload", steps(t, fx.open(t, 0, 0, true, nil), 3), local[:3])
	for _, n := range fx.nodes {
		n.shed(true)
	}
	raw := compare(t, "raw", steps(t, fx.open(t, 0, 3, true, nil), 3), local[3:6])
	fx.nodes[0].close()
	fx.nodes[1].close()
	fx.nodes[2].close()
	gone := compare(t, "hdfs", steps(t, fx.open(t, 0, 6, true, func(c *reader.Config) { c.Directory = nil; c.Nodes = []string{"127.0.0.1:1"} }), 3), local[6:9])
	t.Logf("paths: %v %v %v", paths, raw, gone)
	if paths["offload"] == 0 || raw["raw"] == 0 || gone["local"] == 0 {
		t.Errorf("paths not exercised: offload %v, shedding %v, nodes gone %v", paths, raw, gone)
	}
}

func TestDecode(t *testing.T) {
	for _, c := range []struct {
		name, data string
		want       any
	}{
		{"cls", "7", int64(7)}, {"cls", " 12\n", int64(12)}, {"index", "3", int64(3)}, {"x.id", "-4", int64(-4)},
		{"CLS", "+1_000", int64(1000)}, {"cls2", "\t5 ", int64(5)},
		{"txt", "caf\u00e9", "caf\u00e9"}, {"seg.text", "a", "a"}, {"bin", "\x00\x01", []byte{0, 1}},
		{"class", "3", []byte("3")}, {"pickle", "\x80\x04", []byte{0x80, 4}}, // not decoded (as webdataset 1.0)
	} {
		got, err := reader.Decode(c.name, []byte(c.data))
		if err != nil || fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", c.want) {
			t.Errorf("Decode(%q, %q) = %#v, %v; want %#v", c.name, c.data, got, err, c.want)
		}
	}
	if v, err := reader.Decode("json", []byte(`{"a": [1, "b"], "c": 0.5}`)); err != nil || fmt.Sprint(v) != "map[a:[1 b] c:0.5]" {
		t.Errorf("json: %v %v", v, err)
	}
	for _, bad := range [][2]string{{"cls", "x"}, {"cls", ""}, {"cls", "1__0"}, {"cls", "_1"}, {"cls", "+-1"}, {"cls", "99999999999999999999"},
		{"txt", "\xff"}, {"json", "{"}, {"json", "1 2"}} {
		if _, err := reader.Decode(bad[0], []byte(bad[1])); err == nil {
			t.Errorf("Decode(%q, %q): no error", bad[0], bad[1])
		}
	}
}

// TestPartialSteps: a reader given the slots of some steps (a resume from a state saved
// mid-step or at another world size) returns exactly those slots, in order, with the bytes and
// members of the same slots read normally, taking slots of its own range from the nodes and
// reading the others itself; later steps are its rank's range again.
func TestPartialSteps(t *testing.T) {
	fx := newFixture(t, nil)
	// Both ranks' normal reads of steps 2..4 are the reference for every slot.
	ref := map[[2]int]reader.Sample{}
	for rank := 0; rank < 2; rank++ {
		for _, st := range steps(t, fx.open(t, rank, 2, false, nil), 3) {
			for _, s := range st.Samples {
				ref[[2]int{int(st.Step), s.Slot}] = s
			}
		}
	}
	partial := map[uint64][]int{2: {1, 3, 5, 6}, 3: {}}
	r := fx.open(t, 0, 2, true, func(c *reader.Config) { c.Partial = partial })
	got := steps(t, r, 3)
	for _, st := range got {
		want := partial[st.Step]
		if _, ok := partial[st.Step]; !ok {
			want = []int{0, 1, 2, 3}
		}
		var slots []int
		for _, s := range st.Samples {
			slots = append(slots, s.Slot)
			w := ref[[2]int{int(st.Step), s.Slot}]
			compare(t, fmt.Sprintf("step %d slot %d", st.Step, s.Slot), []*reader.Step{{Step: st.Step, Samples: []reader.Sample{s}}},
				[]*reader.Step{{Step: st.Step, Samples: []reader.Sample{w}}})
		}
		if !slices.Equal(slots, want) {
			t.Errorf("step %d: slots %v, want %v", st.Step, slots, want)
		}
	}
	if st := r.Stats(); st.Offloaded == 0 || st.Local == 0 {
		t.Errorf("stats %+v: want slots of the rank's range from the nodes and the others local", st)
	}
	_, err := reader.Open(context.Background(), reader.Config{User: "alice", Spec: fx.spec, Locator: locator{fx.f, "alice"}, Store: store{fx.f},
		Partial: map[uint64][]int{0: {3, 2}}})
	if err == nil {
		t.Error("unordered partial slots accepted")
	}
	_ = dataset.Version
	_ = schedule.ErrEnd
}

package hotspot

import (
	"context"
	"testing"

	"github.com/newtricks/newtricks/namenode-ext/nnhost"
	"github.com/newtricks/newtricks/namenode-ext/nnhosttest"
)

// A tick between Create's raise batches must not find the hint ready: its files are not held
// yet, so nothing looks short.
func TestNotReadyWhileRaising(t *testing.T) {
	host := nnhosttest.NewFakeHost(12)
	host.File("/ckpt/a", "alice", 1000, 3)
	m, err := New(DefaultConfig(), host, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := m.recover(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := host.GetFileStatus(ctx, "/ckpt/a", nnhost.AsService)
	if err != nil {
		t.Fatal(err)
	}
	h := &hint{rec: record{ID: "h1", Until: 1 << 60}, state: StatePreparing, raising: true,
		files: []*hintFile{{id: st.FileID, path: "/ckpt/a", target: 12}}}
	m.hints["h1"] = h
	m.trackReadiness(ctx)
	if h.state != StatePreparing {
		t.Fatalf("state %s while raising", h.state)
	}
	h.raising = false
	h.files[0].held = true
	m.trackReadiness(ctx)
	if h.state != StatePreparing || h.files[0].ready {
		t.Fatalf("state %s, file ready %v at 3 of 12 replicas", h.state, h.files[0].ready)
	}
	host.PlaceAll()
	host.SetRep("/ckpt/a", 12)
	host.PlaceAll()
	m.trackReadiness(ctx)
	if h.state != StateReady {
		t.Fatalf("state %s once placed", h.state)
	}
}

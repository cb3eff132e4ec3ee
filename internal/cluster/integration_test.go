package cluster_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/newtricks/newtricks/internal/cluster"
	"github.com/newtricks/newtricks/internal/clustertest"
)

func TestClusterSmoke(t *testing.T) {
	c := clustertest.Start(t, cluster.Config{Name: "dc-a"})
	t.Logf("STARTUP 1NN+3DN: %v", c.StartupTime())
	cl, err := c.Client("root")
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	data := bytes.Repeat([]byte("newtricks"), 1000)
	w, err := cl.Create("/x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := cl.ReadFile("/x")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back: %v", err)
	}
	_ = context.Background
	_ = time.Second
}

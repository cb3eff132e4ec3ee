package kit_test

import (
	"os"
	"testing"

	"github.com/newtricks/newtricks/conformance/kit"
)

// TestKitCluster runs the kit against the cluster NEWTRICKS_KIT_CLUSTER names: a JSON file
// (kit.Cluster) or Hadoop conf dirs, comma-separated (the NameNode's first). Without it the
// test is skipped: `go test ./conformance -run TestKit` runs the kit on a cluster the harness
// starts itself.
func TestKitCluster(t *testing.T) {
	spec := os.Getenv("NEWTRICKS_KIT_CLUSTER")
	if spec == "" {
		t.Skip("NEWTRICKS_KIT_CLUSTER is not set: name a cluster (a JSON description or Hadoop conf dirs) to run the kit against it")
	}
	c, err := kit.Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	kit.Run(t, c)
}

package conformance

import (
	"path/filepath"
	"testing"

	"github.com/newtricks/newtricks/conformance/kit"
	"github.com/newtricks/newtricks/harness/extcluster"
)

// TestKit runs the conformance kit (conformance/kit: the cases that also run against any
// cluster named by addresses, `newtricks conformance`) on a cluster the harness starts, fault
// cases included: here the kit may kill co-processes.
func TestKit(t *testing.T) {
	a := artifacts(t)
	c, lay := startCluster(t, a, extcluster.Options{Name: "kit", DataNodes: 3,
		NameNodeSite: map[string]string{"newtricks.namenode.ext.events.subscribe": "CREATE,CLOSE"}})
	kit.Run(t, kit.FromHarness(c, lay, []string{filepath.Join(hadoopLib(a), "*"), a.HooksJar}))
}

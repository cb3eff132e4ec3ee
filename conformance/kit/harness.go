package kit

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/harness/extcluster"
)

// FromHarness describes a cluster the harness runs on this host (started by a test, or by
// `newtricks cluster up` and attached): its addresses, doctor's view of it from the daemons'
// own host (classpath: the daemons'), and faults through the harness, which can kill the
// co-processes.
func FromHarness(c *cluster.Cluster, lay extcluster.Layout, classpath []string) Cluster {
	st := c.State()
	k := Cluster{Name: c.Name(), NameNode: c.NameNodeAddr(), NameNodeHTTP: c.NameNodeHTTPAddr(),
		NameNodeAPI: lay.NameNodeAPI, DataNodeAPIs: lay.DataNodeAPI, Faults: harnessFaults{c},
		Doctor: []DoctorTarget{{ConfDir: st.NameNode.ConfDir, Local: true, Classpath: classpath, Metrics: lay.DataNodeMetrics}}}
	if len(st.DataNodes) > 0 {
		k.Doctor = append(k.Doctor, DoctorTarget{ConfDir: st.DataNodes[0].ConfDir, Local: true, Classpath: classpath})
	}
	return k
}

type harnessFaults struct{ c *cluster.Cluster }

func (f harnessFaults) KillCoprocess(ctx context.Context, daemon string) error {
	d, name := cluster.NameNode, "namenode-ext"
	if i, ok := strings.CutPrefix(daemon, "datanode-"); ok {
		n, err := strconv.Atoi(i)
		if err != nil {
			return err
		}
		d, name = cluster.DataNode(n), "datanode-ext"
	}
	pids, err := f.c.KillChildren(d, name)
	if err != nil {
		return err
	}
	if len(pids) == 0 {
		return fmt.Errorf("no %s under %s", name, d)
	}
	// Dead once it is gone from the daemon's children (the hook reaps it) or replaced.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if alive, _ := f.c.Children(d, name); len(alive) == 0 || alive[0] != pids[0] {
			return nil
		}
	}
	return fmt.Errorf("%s %v still running 10s after SIGKILL", name, pids)
}

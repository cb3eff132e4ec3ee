package kit

import (
	"bytes"
	"context"
	"path"
	"strings"
	"time"

	"github.com/newtricks/newtricks/cmd/newtricks/doctor"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
	"github.com/newtricks/newtricks/xformgraph/golden"
)

// caseDoctor: `newtricks doctor` finds nothing to fail with each conf dir the cluster gave,
// against the running cluster: hooks loaded, co-processes healthy, the daemons running with
// that conf. From a host that is not the daemon's (Local false), it checks the configuration
// and the cluster, not files on this host.
func caseDoctor(t T, e *Env) {
	if len(e.C.Doctor) == 0 {
		t.Skipf("no conf dir given: name the cluster by its Hadoop conf dir (newtricks conformance --conf DIR) to run doctor")
	}
	for _, d := range e.C.Doctor {
		ctx, cancel := context.WithTimeout(e.Ctx, 2*time.Minute)
		r, err := doctor.Run(ctx, doctor.Options{ConfDir: d.ConfDir, Remote: !d.Local, Classpath: d.Classpath,
			Metrics: d.Metrics, NameNodeHTTP: e.C.NameNodeHTTP})
		cancel()
		if err != nil {
			t.Fatalf("doctor --conf %s: %v", d.ConfDir, err)
		}
		var b bytes.Buffer
		doctor.Print(&b, r)
		mode := "remote"
		if d.Local {
			mode = "on the daemon's host"
		}
		t.Logf("newtricks doctor --conf %s (%s):\n%s", d.ConfDir, mode, strings.TrimRight(b.String(), "\n"))
		if r.Fail != 0 {
			t.Errorf("doctor --conf %s: %d checks failed", d.ConfDir, r.Fail)
		}
		if len(r.Find("namenode.reachable")) == 0 {
			t.Errorf("doctor --conf %s did not check the running cluster", d.ConfDir)
		}
	}
}

// caseKillDataNodeExt: the first datanode-ext dies; its hook starts a new one, which serves
// offload again: the same bytes as the reader makes locally, some of them made by it.
func caseKillDataNodeExt(t T, e *Env) {
	if len(e.C.DataNodeAPIs) == 0 {
		t.Fatal("no datanode-ext API known")
	}
	spec, cases := goldenDataset(t, e, path.Join(e.Dir, "golden-kill"), func(gc golden.Case) bool {
		return strings.HasPrefix(gc.GraphName, "imagenet")
	})
	cc, err := Dial(e.C.DataNodeAPIs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	node := pb.NewOffloadClient(cc)
	if err := e.C.Faults.KillCoprocess(e.Ctx, "datanode-0"); err != nil {
		t.Fatalf("kill datanode-ext 0: %v", err)
	}
	killed := time.Now()
	eventually(t, 90*time.Second, "datanode-ext 0 serving again at "+e.C.DataNodeAPIs[0], func() error {
		ctx, cancel := context.WithTimeout(e.Ctx, 2*time.Second)
		defer cancel()
		_, err := node.NodeStatus(ctx, &pb.OffloadNodeStatusRequest{User: e.C.User})
		return err
	})
	t.Logf("datanode-ext 0 serving again %v after the kill", time.Since(killed).Round(10*time.Millisecond))
	local, _ := readAll(t, e, readerConfig(e, e.C.User, e.FS, spec, false), len(cases))
	remote, paths := readAll(t, e, readerConfig(e, e.C.User, e.FS, spec, true), len(cases))
	for i, gc := range cases {
		if !bytes.Equal(local[i], remote[i]) {
			t.Errorf("case %s: bytes from the DataNodes differ from the local ones after the kill", gc.ID)
		}
	}
	st, err := node.NodeStatus(e.Ctx, &pb.OffloadNodeStatusRequest{User: e.C.User})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("after the restart: paths %v; the new datanode-ext 0 transformed %d samples", paths, st.GetSamplesTransformed())
	switch {
	case paths["offload"] == 0:
		notTransformed(t, e, paths)
	case st.GetSamplesTransformed() == 0 && !st.GetShedding():
		t.Errorf("the restarted datanode-ext 0 (%s) transformed no sample (paths %v)", e.C.DataNodeAPIs[0], paths)
	}
}

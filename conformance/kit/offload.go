package kit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"time"

	"github.com/colinmarc/hdfs/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/newtricks/newtricks/dataset"
	"github.com/newtricks/newtricks/internal/hdfsio"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
	"github.com/newtricks/newtricks/reader"
	"github.com/newtricks/newtricks/schedule"
	"github.com/newtricks/newtricks/xformgraph"
	"github.com/newtricks/newtricks/xformgraph/golden"
)

// goldenDataset stores the inputs of the xformgraph golden cases (embedded in the kit: no
// media needed on the kit's host) under dir as User, indexes them, and returns a schedule that
// asks for every case once, in order, with the cases. only, if set, keeps the cases it accepts.
func goldenDataset(t T, e *Env, dir string, only func(golden.Case) bool) (*schedule.Spec, []golden.Case) {
	t.Helper()
	var cases []golden.Case
	for _, gc := range golden.Cases() {
		if only == nil || only(gc) {
			cases = append(cases, gc)
		}
	}
	if err := e.FS.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	spec := &schedule.Spec{Name: "kit", Seed: 1, GlobalBatch: 1, WorldSize: 1}
	srcOf := map[string]int{}
	for _, gc := range cases {
		// Stored as "<sample>.<ext>" so that the index key is the golden key.
		p := path.Join(dir, gc.Sample+path.Ext(gc.Sample))
		if _, err := e.FS.Stat(p); err != nil {
			if err := hdfsio.WriteFile(e.Ctx, e.FS, p, gc.Input()); err != nil {
				t.Fatalf("write %s: %v", p, err)
			}
		}
		name := fmt.Sprintf("%s-s%d", gc.GraphName, gc.Seed)
		i, ok := srcOf[name]
		if !ok {
			i = len(spec.Sources)
			srcOf[name] = i
			spec.Sources = append(spec.Sources, schedule.Source{Name: name, Dataset: dir, Weight: 1, Graph: gc.Graph()})
		}
		spec.Explicit = append(spec.Explicit, []schedule.ExplicitSample{{Source: i, Key: gc.Key, Epoch: gc.Epoch}})
	}
	idx, err := dataset.Build(e.Ctx, dataset.HDFSFS{Client: e.FS}, dir, dataset.BuildOptions{})
	if err != nil {
		t.Fatalf("index %s: %v", dir, err)
	}
	if _, err := dataset.Store(e.Ctx, e.FS, idx); err != nil {
		t.Fatalf("store the index of %s: %v", dir, err)
	}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	return spec, cases
}

// readerConfig is a reader of spec as user through fs; offload sends it to the DataNodes it
// finds as a trainer's reader does, in namenode-ext's directory.
func readerConfig(e *Env, user string, fs *hdfs.Client, spec *schedule.Spec, offload bool) reader.Config {
	cfg := reader.Config{User: user, Spec: spec, Locator: reader.NamespaceLocator{Client: e.NS, User: user},
		Store: &reader.HDFSStore{Client: fs}, MaxWait: 30 * time.Second, Retry: 500 * time.Millisecond, Dial: Dial}
	if offload {
		cfg.Directory = reader.NamespaceDirectory{Client: e.Directory, User: user}
	}
	return cfg
}

// readAll reads n steps of one sample each; it returns every sample's frames (copied) and how
// many samples took each path.
func readAll(t T, e *Env, cfg reader.Config, n int) ([][]byte, map[string]int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(e.Ctx, 5*time.Minute)
	defer cancel()
	r, err := reader.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("open a reader as %s (offload %v): %v", cfg.User, cfg.Directory != nil, err)
	}
	defer r.Close()
	out := make([][]byte, 0, n)
	paths := map[string]int{}
	for i := 0; i < n; i++ {
		st, err := r.Next(ctx)
		if err != nil {
			t.Fatalf("step %d of %d: %v", i, n, err)
		}
		s := st.Samples[0]
		if s.Err != nil {
			t.Fatalf("step %d sample %q: %v", i, s.Key, s.Err)
		}
		paths[s.Path]++
		out = append(out, bytes.Clone(s.Frames))
		st.Release()
	}
	return out, paths
}

// caseOffload: every golden case transformed by the DataNodes gives the bytes the reader
// computes itself; in the goldens' own determinism domain, the golden digests too.
func caseOffload(t T, e *Env) {
	if len(e.C.DataNodeAPIs) == 0 {
		t.Fatal("no datanode-ext API known")
	}
	spec, cases := goldenDataset(t, e, path.Join(e.Dir, "golden"), nil)
	start := time.Now()
	local, lpaths := readAll(t, e, readerConfig(e, e.C.User, e.FS, spec, false), len(cases))
	tLocal := time.Since(start)
	start = time.Now()
	remote, rpaths := readAll(t, e, readerConfig(e, e.C.User, e.FS, spec, true), len(cases))
	tRemote := time.Since(start)
	if lpaths["local"] != len(cases) {
		t.Errorf("local reader: paths %v, want all %d local", lpaths, len(cases))
	}
	for i, gc := range cases {
		if !bytes.Equal(local[i], remote[i]) {
			t.Errorf("case %s: %d bytes from the DataNodes differ from the %d bytes made locally", gc.ID, len(remote[i]), len(local[i]))
		}
	}
	if rpaths["offload"] == 0 {
		notTransformed(t, e, rpaths)
	}
	checked := 0
	if dom := xformgraph.Domain().String(); dom == golden.RecordedDomain() {
		for i, gc := range cases {
			if err := golden.Check(gc.ID, remote[i]); err != nil {
				t.Errorf("%v", err)
			}
			checked++
		}
	} else {
		t.Logf("golden digests not checked: this kit's determinism domain %q is not the goldens' %q (both sides still agree byte for byte)", dom, golden.RecordedDomain())
	}
	t.Logf("%d cases: local %v (%v), via the DataNodes %v (%v); %d golden digests checked", len(cases), lpaths, tLocal.Round(time.Millisecond),
		rpaths, tRemote.Round(time.Millisecond), checked)
}

// casePermission: another user can read nothing of User's private directory, neither
// through HDFS, nor a hint, nor the offload path.
func casePermission(t T, e *Env) {
	priv := path.Join(e.Dir, "private")
	if err := e.FS.MkdirAll(priv, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := e.FS.Chmod(priv, 0o700); err != nil {
		t.Fatal(err)
	}
	// A small dataset of two images (its files are 0644: the directory's 0700 is what guards them).
	spec, _ := goldenDataset(t, e, path.Join(priv, "ds"), func(gc golden.Case) bool {
		return gc.GraphName == "imagenet" && gc.Epoch == 0 && strings.HasPrefix(gc.Sample, "small_4")
	})
	secret := path.Join(priv, "secret")
	if err := write(e.Ctx, e.FS, secret, 0, []byte("kit"), 0o644); err != nil {
		t.Fatal(err)
	}
	who := e.C.Other

	if _, err := e.OtherFS.ReadFile(secret); !errors.Is(err, os.ErrPermission) {
		t.Errorf("%s read %s in %s's 0700 directory: %v, want permission denied", who, secret, e.C.User, err)
	}
	if _, err := e.NS.Locate(e.Ctx, &pb.LocateRequest{Path: secret, User: who}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("namenode-ext Locate of %s as %s: %v, want PermissionDenied", secret, who, err)
	}
	other := hints(t, e, who)
	if _, err := createHint(e.Ctx, other, hintHot(secret)); err == nil || !strings.Contains(strings.ToLower(err.Error()), "permission") {
		t.Errorf("hint on %s as %s: %v, want a permission error", secret, who, err)
	}
	if r, err := replication(e.SU, secret); err != nil || r == 0 {
		t.Errorf("%s: factor %d (%v)", secret, r, err)
	}
	ctx, cancel := context.WithTimeout(e.Ctx, 2*time.Minute)
	defer cancel()
	r, err := reader.Open(ctx, readerConfig(e, who, e.OtherFS, spec, true))
	if err == nil {
		r.Close()
		t.Errorf("%s opened an offload reader on a dataset in %s's 0700 directory", who, e.C.User)
	} else if !(errors.Is(err, os.ErrPermission) || status.Code(errors.Unwrap(err)) == codes.PermissionDenied || strings.Contains(err.Error(), "ermission denied")) {
		t.Errorf("%s's offload reader on %s's private dataset: %v, want permission denied", who, e.C.User, err)
	}
	t.Logf("%s denied on HDFS, Locate, hints and offload of %s's private files", who, e.C.User)
}

// notTransformed fails the case because no sample was transformed by a DataNode, unless the
// DataNodes said why: their governors shed (the node's CPU is busy with other work), so they
// sent raw bytes, which is what they must do then. A busy cluster is not a broken one; the case
// then says that the transform on the DataNodes was not exercised.
func notTransformed(t T, e *Env, paths map[string]int) {
	t.Helper()
	var shedding []string
	for _, addr := range e.C.DataNodeAPIs {
		cc, err := Dial(addr)
		if err != nil {
			continue
		}
		st, err := pb.NewOffloadClient(cc).NodeStatus(e.Ctx, &pb.OffloadNodeStatusRequest{User: e.C.User})
		cc.Close()
		if err == nil && st.GetShedding() {
			shedding = append(shedding, fmt.Sprintf("%s (cpu used by others %.2f)", addr, st.GetCpuOther()))
		}
	}
	if len(shedding) > 0 {
		t.Logf("no sample was transformed by a DataNode (paths %v): the DataNodes shed, %s, and sent raw bytes; "+
			"the bytes agree, but the transform on the DataNodes was not exercised (run the kit when the cluster is idler, "+
			"or with newtricks.datanode.ext.offload.cpu.high=1)", paths, strings.Join(shedding, ", "))
		return
	}
	t.Errorf("no sample was transformed by a DataNode, and none sheds: paths %v", paths)
}

package conformance

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/newtricks/newtricks/cmd/newtricks/doctor"
	"github.com/newtricks/newtricks/dataset"
	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/harness/datasets"
	"github.com/newtricks/newtricks/harness/extcluster"
	"github.com/newtricks/newtricks/internal/authn"
	"github.com/newtricks/newtricks/internal/hdfsio"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
	"github.com/newtricks/newtricks/reader"
	"github.com/newtricks/newtricks/schedule"
	"github.com/newtricks/newtricks/xformgraph"
)

// Hostile callers of the DataNode side (issue 25), on real clusters: a corrupt replica on disk,
// a user opening sessions beyond the per-user cap, fake delegation tokens hammered at a
// DataNode, and a sample claiming 2^62 bytes.

// hostileUserCap is sessions.max.per.user on every DataNode of TestHostileDN.
const hostileUserCap = 3

// scrapeSum returns the sum of a metric family's series on a co-process's /metrics (-1 when it
// is not there).
func scrapeSum(t *testing.T, addr, name string) float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fams, err := doctor.Scrape(ctx, http.DefaultClient, addr)
	if err != nil {
		t.Fatal(err)
	}
	v, ok := fams[name]
	if !ok {
		return -1
	}
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	return sum
}

// dataNodeExtPids returns the pid of every DataNode's datanode-ext.
func dataNodeExtPids(t *testing.T, c *cluster.Cluster) []int {
	t.Helper()
	var out []int
	for i := range c.DataNodes() {
		pids, err := c.Children(cluster.DataNode(i), "datanode-ext")
		if err != nil || len(pids) != 1 {
			t.Fatalf("datanode-ext of DataNode %d: pids %v, %v", i, pids, err)
		}
		out = append(out, pids[0])
	}
	return out
}

// coprocessRestarts returns DataNode i's CoprocessRestarts (its hook's JMX).
func coprocessRestarts(t *testing.T, c *cluster.Cluster, i int) float64 {
	t.Helper()
	b, err := jmx(c.DataNodes()[i].HTTPAddr, "Hadoop:service=DataNode,name=NewtricksDataNodeHook")
	if err != nil {
		t.Fatal(err)
	}
	v, _ := b["CoprocessRestarts"].(float64)
	return v
}

// replicaFile finds block id's replica file in a DataNode's data directory.
func replicaFile(t *testing.T, dataDir string, id int64) string {
	t.Helper()
	name := fmt.Sprintf("blk_%d", id)
	var found string
	filepath.WalkDir(dataDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == name {
			found = p
			return filepath.SkipAll
		}
		return nil
	})
	if found == "" {
		t.Fatalf("no %s under %s", name, dataDir)
	}
	return found
}

// lyingLocator is the reader's Locator with one file's length claimed (the old API lets a
// caller send any block list; the index the caller wrote says the same).
type lyingLocator struct {
	reader.Locator
	path  string
	claim int64
}

func (l lyingLocator) Locate(ctx context.Context, p string) (*pb.LocatedBlocks, error) {
	lb, err := l.Locator.Locate(ctx, p)
	if err != nil || p != l.path {
		return lb, err
	}
	lb = proto.Clone(lb).(*pb.LocatedBlocks)
	last := lb.Blocks[len(lb.Blocks)-1]
	last.NumBytes = l.claim - last.GetOffset()
	lb.FileLength = l.claim
	return lb, nil
}

// cappedStore refuses to read more than 64 MiB, so that the test itself never allocates
// what a hostile index claims when the reader falls back to HDFS.
type cappedStore struct{ reader.Store }

func (s cappedStore) ReadAt(ctx context.Context, p string, off, n int64) ([]byte, error) {
	if n > 64<<20 {
		return nil, fmt.Errorf("test store: refusing to read %d bytes of %s", n, p)
	}
	return s.Store.ReadAt(ctx, p, off, n)
}

// localFrames runs g on data as the reader would.
func localFrames(t *testing.T, src schedule.Source, key string, epoch uint64, data []byte) []byte {
	t.Helper()
	g, err := xformgraph.Compile(src.Graph, nil, xformgraph.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := g.Run(context.Background(), xformgraph.Sample{Key: key, Epoch: epoch, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	b, err := out.AppendFrames(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHostileDN: a corrupt replica, a user over the session cap, a sample claiming 2^62 bytes
// and a real one over read.max.bytes, on one real 3-DataNode cluster (replication 3,
// read.max.bytes 1 MiB) with real JPEGs.
func TestHostileDN(t *testing.T) {
	a := artifacts(t)
	mediaDir := os.Getenv("NEWTRICKS_XFORM_MEDIA")
	if mediaDir == "" {
		t.Fatal("NEWTRICKS_XFORM_MEDIA is not set (make test sets it after make xform-media)")
	}
	m, err := datasets.LoadMedia(mediaDir)
	if err != nil {
		t.Fatal(err)
	}
	c, lay := startCluster(t, a, extcluster.Options{Name: "hostile-dn", DataNodes: 3,
		DataNodeSite: func(int) map[string]string {
			return map[string]string{"newtricks.datanode.ext.offload.cpu.high": "1", "newtricks.datanode.ext.offload.cpu.low": "1",
				"newtricks.datanode.ext.offload.sessions.max.per.user": fmt.Sprint(hostileUserCap),
				"newtricks.datanode.ext.read.max.bytes":                fmt.Sprint(1 << 20)}
		}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	su := superuser(t)
	fs := mustClient(t, c, su)
	ns, nsConn, err := extcluster.NamespaceClient(lay)
	if err != nil {
		t.Fatal(err)
	}
	defer nsConn.Close()
	nodes, err := extcluster.DialOffload(ctx, lay, su)
	if err != nil {
		t.Fatal(err)
	}
	defer nodes.Close()
	uuids := make([]string, len(nodes.Clients))
	for i, n := range nodes.Clients {
		st, err := n.NodeStatus(ctx, &pb.OffloadNodeStatusRequest{User: su})
		if err != nil {
			t.Fatal(err)
		}
		uuids[i] = st.GetDatanodeUuid()
	}

	// A dataset of single JPEG files, world-readable, indexed by the real CLI.
	local := filepath.Join(t.TempDir(), "img")
	if _, err := datasets.Write(local, datasets.Media{Images: m.Images}, datasets.Layout{Singles: 6}); err != nil {
		t.Fatal(err)
	}
	const root = "/data/hostile"
	if err := hdfsio.UploadDir(ctx, fs, local, root); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.CommandContext(ctx, a.NewtricksCLI, "dataset", "index", "--namenode", c.NameNodeAddr(), "--user", su, root).CombinedOutput(); err != nil {
		t.Fatalf("newtricks dataset index: %v\n%s", err, out)
	}
	ix, err := dataset.Load(fs, root)
	if err != nil {
		t.Fatal(err)
	}
	src := schedule.Source{Name: "img", Dataset: root, Weight: 1, Graph: offloadImageGraph()}
	readLocal := func(key string) []byte {
		i, _ := ix.Lookup(key)
		s := ix.Sample(i)
		b, err := os.ReadFile(filepath.Join(local, filepath.FromSlash(ix.Files()[s.GetFile()].GetPath())))
		if err != nil {
			t.Fatal(err)
		}
		return b[s.GetOffset() : s.GetOffset()+s.GetLength()]
	}
	pidsBefore := dataNodeExtPids(t, c)

	t.Run("a flipped byte in a replica: the right bytes from another replica, the NameNode told", func(t *testing.T) {
		key := ix.Sample(0).GetKey()
		fp := ix.FilePath(int(ix.Sample(0).GetFile()))
		lb, err := ns.Locate(ctx, &pb.LocateRequest{Path: fp, User: su})
		if err != nil {
			t.Fatal(err)
		}
		// One explicit step of that sample, members DataNode 0 and 1, with a seed that makes
		// DataNode 0 its owner (both hold it: replication 3).
		spec := &schedule.Spec{Name: "corrupt", GlobalBatch: 1, WorldSize: 1, Sources: []schedule.Source{src},
			Explicit: [][]schedule.ExplicitSample{{{Source: 0, Key: key}}}}
		members := uuids[:2]
		for seed := uint64(1); ; seed++ {
			if seed > 64 {
				t.Fatal("no seed in 1..64 makes DataNode 0 the owner")
			}
			spec.Seed = seed
			plan, err := schedule.NewPlan(spec, []int{ix.Len()}, func(_ int, k string) (int, bool) { return ix.Lookup(k) })
			if err != nil {
				t.Fatal(err)
			}
			files := make([]*pb.LocatedBlocks, len(ix.Files()))
			for i := range files {
				files[i] = &pb.LocatedBlocks{}
				if ix.FilePath(i) == fp {
					files[i] = lb
				}
			}
			_, owners, err := dataset.StepOwners(plan, []*dataset.Index{ix}, [][]*pb.LocatedBlocks{files}, members, 0)
			if err != nil {
				t.Fatal(err)
			}
			if owners[0] == 0 {
				break
			}
		}
		if err := spec.Validate(); err != nil {
			t.Fatal(err)
		}
		blk := lb.GetBlocks()[0]
		rf := replicaFile(t, c.DataNodes()[0].DataDir, blk.GetBlockId())
		b, err := os.ReadFile(rf)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 0x55
		if err := os.WriteFile(rf, b, 0o644); err != nil {
			t.Fatal(err)
		}
		corruptBefore := scrapeSum(t, lay.DataNodeMetrics[0], "newtricks_offload_corrupt_replicas_total")
		store := &reader.HDFSStore{Client: fs}
		defer store.Close()
		r, err := reader.Open(ctx, reader.Config{User: su, Spec: spec, Locator: reader.NamespaceLocator{Client: ns, User: su},
			Store: store, Nodes: lay.DataNodeAPI[:2], MaxWait: 20 * time.Second, Dial: extcluster.Dial})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		st, err := r.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := st.Samples[0]
		want := localFrames(t, src, key, 0, readLocal(key))
		t.Logf("sample %q via %s (%d bytes), err %v; reader stats %v", key, got.Path, len(got.Frames), got.Err, r.Stats())
		if got.Err != nil || got.Path != "offload" || !equalBytes(got.Frames, want) {
			t.Fatalf("sample %q from a corrupt replica: path %s, err %v, equal %v; want DataNode 0's transform of the good bytes",
				key, got.Path, got.Err, equalBytes(got.Frames, want))
		}
		if v := scrapeSum(t, lay.DataNodeMetrics[0], "newtricks_offload_corrupt_replicas_total"); v < corruptBefore+1 {
			t.Errorf("DataNode 0 newtricks_offload_corrupt_replicas_total %v (before %v), want one more", v, corruptBefore)
		}
		if v := scrapeSum(t, lay.DataNodeMetrics[0], "newtricks_offload_peer_reads_total"); v < 1 {
			t.Errorf("DataNode 0 read nothing from a peer (%v)", v)
		}
		took := eventually(t, 60*time.Second, "the NameNode counts a corrupt replica", func() error {
			b, err := jmx(c.NameNodeHTTPAddr(), "Hadoop:service=NameNode,name=FSNamesystem")
			if err != nil {
				return err
			}
			if v, _ := b["CorruptBlocks"].(float64); v < 1 {
				return fmt.Errorf("FSNamesystem CorruptBlocks %v", b["CorruptBlocks"])
			}
			return nil
		})
		// And which replica: the NameNode's fsck marks DataNode 0's replica of that block.
		line := ""
		eventually(t, 30*time.Second, "fsck marks DataNode 0's replica corrupt", func() error {
			out, err := fsckReplicas(c, su, fp)
			if err != nil {
				return err
			}
			for _, l := range strings.Split(out, "\n") {
				if strings.Contains(l, fmt.Sprintf("blk_%d_", blk.GetBlockId())) {
					line = l
				}
			}
			if i := strings.Index(line, c.DataNodes()[0].XferAddr); i < 0 || !strings.HasPrefix(afterStorage(line[i:]), "(CORRUPT)") {
				return fmt.Errorf("fsck: %s", line)
			}
			return nil
		})
		t.Logf("NameNode: CorruptBlocks >= 1 after %v; fsck: %s", took.Round(time.Millisecond), strings.TrimSpace(line))
	})

	t.Run("concurrent opens beyond the per-user cap", func(t *testing.T) {
		spec := &schedule.Spec{Name: "cap", Seed: 3, GlobalBatch: 2, WorldSize: 1, MaxSteps: 100, Sources: []schedule.Source{src}}
		request := func(user string) *pb.OpenSessionRequest { return openRequest(user, spec, ix, uuids) }
		reqs := map[string]*pb.OpenSessionRequest{"alice": request("alice"), "bob": request("bob")}
		type result struct {
			user, id string
			err      error
		}
		var wg sync.WaitGroup
		results := make(chan result, 16)
		go1 := make(chan struct{})
		for _, user := range []string{"alice", "alice", "alice", "alice", "alice", "alice", "alice", "alice", "bob", "bob"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-go1
				resp, err := nodes.Clients[0].OpenSession(ctx, reqs[user])
				results <- result{user, resp.GetSessionId(), err}
			}()
		}
		close(go1)
		wg.Wait()
		close(results)
		ok := map[string]int{}
		var ids []result
		for r := range results {
			switch {
			case r.err == nil:
				ok[r.user]++
				ids = append(ids, r)
			case status.Code(r.err) == codes.ResourceExhausted && r.user == "alice" && strings.Contains(r.err.Error(), "sessions.max.per.user"):
			default:
				t.Errorf("%s: %v", r.user, r.err)
			}
		}
		t.Logf("8 concurrent opens by alice and 2 by bob on DataNode 0: opened %v", ok)
		if ok["alice"] != hostileUserCap || ok["bob"] != 2 {
			t.Errorf("opened %v: want exactly %d of alice's (the cap, the others RESOURCE_EXHAUSTED) and both of bob's", ok, hostileUserCap)
		}
		if v := scrapeSum(t, lay.DataNodeMetrics[0], "newtricks_offload_sessions_refused_total"); v != float64(8-hostileUserCap) {
			t.Errorf("DataNode 0 newtricks_offload_sessions_refused_total %v, want %d", v, 8-hostileUserCap)
		}
		for _, r := range ids {
			if _, err := nodes.Clients[0].CloseSession(ctx, &pb.CloseSessionRequest{User: r.user, SessionId: r.id}); err != nil {
				t.Error(err)
			}
		}
		if _, err := nodes.Clients[0].OpenSession(ctx, reqs["alice"]); err != nil {
			t.Errorf("alice after closing her sessions: %v", err)
		}
	})

	t.Run("a sample claiming 2^62 bytes, a real one over read.max.bytes: clear answers, datanode-ext still the same process", func(t *testing.T) {
		restarts := make([]float64, 3)
		for i := range restarts {
			restarts[i] = coprocessRestarts(t, c, i)
		}
		// A dataset the caller indexed itself: big.jpg is claimed to hold 2^62 bytes. ok.jpg
		// is true. Before issue 25's layout change the caller also sent the block list that
		// said so; a DataNode now locates big.jpg itself and finds it shorter.
		const hroot = "/data/huge"
		const claim = int64(1) << 62
		if err := fs.MkdirAll(hroot, 0o755); err != nil {
			t.Fatal(err)
		}
		small := m.Images[1%len(m.Images)].Data
		for name, b := range map[string][]byte{"big.jpg": m.Images[0].Data, "ok.jpg": small} {
			if err := hdfsio.WriteFile(ctx, fs, hroot+"/"+name, b); err != nil {
				t.Fatal(err)
			}
		}
		built, err := dataset.Build(ctx, dataset.HDFSFS{Client: fs}, hroot, dataset.BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		mi := proto.Clone(built).(*pb.DatasetIndex)
		for i, f := range mi.GetFiles() {
			if f.GetPath() == "big.jpg" {
				f.Length = claim
				for _, s := range mi.GetSamples() {
					if int(s.GetFile()) == i {
						s.Length, s.Cost = claim, 1
					}
				}
			}
		}
		b, err := dataset.Marshal(mi)
		if err != nil {
			t.Fatal(err)
		}
		if err := hdfsio.WriteFile(ctx, fs, hroot+"/"+dataset.IndexName, b); err != nil {
			t.Fatal(err)
		}
		hix, err := dataset.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		hsrc := schedule.Source{Name: "huge", Dataset: hroot, Weight: 1, Graph: offloadImageGraph()}
		spec := &schedule.Spec{Name: "huge", Seed: 5, GlobalBatch: 1, WorldSize: 1, Sources: []schedule.Source{hsrc},
			Explicit: [][]schedule.ExplicitSample{{{Source: 0, Key: "big"}}, {{Source: 0, Key: "ok"}}}}
		if err := spec.Validate(); err != nil {
			t.Fatal(err)
		}
		// What a reader that believed the index sends: every node refuses it, saying why.
		for i, n := range nodes.Clients {
			_, err := n.OpenSession(ctx, openRequest(su, spec, hix, uuids))
			if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "the index says 4611686018427387904 (stale index)") {
				t.Errorf("datanode-ext %d, a session on an index claiming 2^62 bytes: %v, want FAILED_PRECONDITION (stale index)", i, err)
			}
		}
		// Through the public reader path, with a Locator that lies as the index does (so that
		// the reader itself takes the claim): the nodes refuse the sessions, the reader reads
		// from HDFS (here a store that refuses more than 64 MiB), the true sample is right.
		store := &reader.HDFSStore{Client: fs}
		r, err := reader.Open(ctx, reader.Config{User: su, Spec: spec, Nodes: lay.DataNodeAPI, Dial: extcluster.Dial,
			Locator: lyingLocator{Locator: reader.NamespaceLocator{Client: ns, User: su}, path: hroot + "/big.jpg", claim: claim},
			Store:   cappedStore{store}, MaxWait: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		steps := nextSteps(t, r, 2)
		r.Close()
		store.Close()
		bigS, okS := steps[0].Samples[0], steps[1].Samples[0]
		t.Logf("reader: big: path %s, err %v; ok: path %s, err %v", bigS.Path, bigS.Err, okS.Path, okS.Err)
		if bigS.Err == nil || okS.Err != nil || !equalBytes(okS.Frames, localFrames(t, hsrc, "ok", 0, small)) {
			t.Errorf("reader on the lying index: big %v, ok %s %v; want big failed and ok right", bigS.Err, okS.Path, okS.Err)
		}

		// A real sample over these DataNodes' read.max.bytes (1 MiB): the owner answers
		// UNAVAILABLE before reading it, the reader reads it from HDFS and transforms it
		// itself, the same bytes as the local path; on the raw path too.
		const rroot = "/data/bigreal"
		huge := noiseJPEG(t, 1200, 1200)
		if len(huge) <= 1<<20 {
			t.Fatalf("the big JPEG has %d bytes, not more than 1 MiB", len(huge))
		}
		if err := fs.MkdirAll(rroot, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := hdfsio.WriteFile(ctx, fs, rroot+"/huge.jpg", huge); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.CommandContext(ctx, a.NewtricksCLI, "dataset", "index", "--namenode", c.NameNodeAddr(), "--user", su, rroot).CombinedOutput(); err != nil {
			t.Fatalf("newtricks dataset index: %v\n%s", err, out)
		}
		rsrc := schedule.Source{Name: "bigreal", Dataset: rroot, Weight: 1, Graph: offloadImageGraph()}
		rspec := &schedule.Spec{Name: "bigreal", Seed: 6, GlobalBatch: 1, WorldSize: 1, Sources: []schedule.Source{rsrc},
			Explicit: [][]schedule.ExplicitSample{{{Source: 0, Key: "huge"}}}}
		want := localFrames(t, rsrc, "huge", 0, huge)
		answered := func() float64 {
			sum := 0.0
			for i := range lay.DataNodeMetrics {
				sum += scrapeSum(t, lay.DataNodeMetrics[i], "newtricks_offload_samples_total")
			}
			return sum
		}
		for _, raw := range []bool{false, true} {
			before := answered()
			store := &reader.HDFSStore{Client: fs}
			r, err := reader.Open(ctx, reader.Config{User: su, Spec: rspec, Nodes: lay.DataNodeAPI, Dial: extcluster.Dial,
				Locator: reader.NamespaceLocator{Client: ns, User: su}, Store: store, MaxWait: 20 * time.Second, ForceRawOnly: raw})
			if err != nil {
				t.Fatal(err)
			}
			st := nextSteps(t, r, 1)[0].Samples[0]
			stats := r.Stats()
			r.Close()
			store.Close()
			t.Logf("raw-only %v: %d-byte sample via %s, err %v; nodes answered %v samples", raw, len(huge), st.Path, st.Err, answered()-before)
			if st.Err != nil || st.Path != "local" || !equalBytes(st.Frames, want) {
				t.Errorf("raw-only %v: the sample over read.max.bytes: path %s, err %v, equal %v; want the reader's own transform of it", raw, st.Path, st.Err, equalBytes(st.Frames, want))
			}
			if stats.BytesFromNodes != 0 {
				t.Errorf("raw-only %v: %d bytes came from the nodes for a sample over their read.max.bytes", raw, stats.BytesFromNodes)
			}
		}

		if after := dataNodeExtPids(t, c); fmt.Sprint(after) != fmt.Sprint(pidsBefore) {
			t.Errorf("datanode-ext pids %v, were %v: a co-process died", after, pidsBefore)
		}
		for i := range restarts {
			if v := coprocessRestarts(t, c, i); v != restarts[i] {
				t.Errorf("DataNode %d CoprocessRestarts %v, was %v", i, v, restarts[i])
			}
			if _, err := nodes.Clients[i].NodeStatus(ctx, &pb.OffloadNodeStatusRequest{User: su}); err != nil {
				t.Errorf("datanode-ext %d: %v", i, err)
			}
		}
	})
}

// openRequest is the OpenSessionRequest a reader of spec (one source, ix) sends as user with
// these members.
func openRequest(user string, spec *schedule.Spec, ix *dataset.Index, members []string) *pb.OpenSessionRequest {
	req := &pb.OpenSessionRequest{User: user, Schedule: spec.ToProto(), DeterminismDomain: xformgraph.Domain().String(), RawOnly: true,
		Sources: []*pb.SessionSource{{IndexSha256: ix.SHA256()}}}
	for _, u := range members {
		req.Members = append(req.Members, &pb.SessionMember{DatanodeUuid: u})
	}
	return req
}

// noiseJPEG is a w x h JPEG of noise (large: noise does not compress).
func noiseJPEG(t *testing.T, w, h int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range img.Pix {
		img.Pix[i] = byte(rng.Uint32())
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// fsckReplicas runs the NameNode's fsck on path with replica details (its /fsck servlet, as
// `hdfs fsck PATH -files -blocks -replicaDetails` does).
func fsckReplicas(c *cluster.Cluster, user, path string) (string, error) {
	u := fmt.Sprintf("http://%s/fsck?ugi=%s&path=%s&files=1&blocks=1&replicadetails=1", c.NameNodeHTTPAddr(), url.QueryEscape(user), url.QueryEscape(path))
	resp, err := http.Get(u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// afterStorage skips "127.0.0.1:port,DS-...,DISK]" in an fsck replica entry.
func afterStorage(s string) string {
	if i := strings.IndexByte(s, ']'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func equalBytes(a, b []byte) bool { return len(a) == len(b) && string(a) == string(b) }

// TestHostileDNSecure: fake delegation tokens (alice's identifier with forged passwords, each
// new, so that no cache can answer them) hammered at a DataNode's datanode-ext from one host:
// the verifications it asks its DataNode for (each one a DFSClient call to the NameNode) stay
// within that host's failure budget (api.auth.fail.burst + rate x seconds), the NameNode logs
// no more failed authentications than that, the flood is refused with RESOURCE_EXHAUSTED, and
// alice's real token, from another host, keeps working meanwhile.
func TestHostileDNSecure(t *testing.T) {
	a := artifacts(t)
	// A small failure budget, so that even a slow machine's flood (old code: every fake
	// token a DataNode verification and a NameNode authentication) exceeds it many times.
	const rate, burst = 2, 5
	s := startSecureCluster(t, a, extcluster.Options{Name: "hostile-secure", DataNodes: 1,
		HDFSSite: map[string]string{"newtricks.datanode.ext.api.auth.fail.rate": fmt.Sprint(rate),
			"newtricks.datanode.ext.api.auth.fail.burst": fmt.Sprint(burst)}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	root := s.hdfsClient(t, cluster.PrincipalHDFS)
	if err := root.MkdirAll("/alice", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := root.Chown("/alice", "alice", "alice"); err != nil {
		t.Fatal(err)
	}
	alice := s.hdfsClient(t, "alice")
	payload := randomBytes(t, 4096)
	if err := writeSmall(alice, "/alice/f", payload, 0o600); err != nil {
		t.Fatal(err)
	}
	var tokStr string
	eventually(t, 2*time.Minute, "alice's delegation token (WebHDFS)", func() error {
		var err error
		tokStr, err = s.sec.DelegationToken(ctx, s.c, "alice")
		return err
	})
	tok, err := authn.DecodeToken(tokStr)
	if err != nil {
		t.Fatal(err)
	}
	good := authn.TokenCredentials{Token: tokStr}
	ns := pb.NewNamespaceClient(s.dial(t, s.lay.NameNodeAPI, good))
	var lb *pb.LocatedBlocks
	if err := extcluster.WaitServing(ctx, func(ctx context.Context) error {
		lb, err = ns.Locate(ctx, &pb.LocateRequest{Path: "/alice/f"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	dnAPI := s.lay.DataNodeAPI[0]
	goodRC := pb.NewReplicasClient(s.dial(t, dnAPI, good))
	read := func() error {
		resp, err := goodRC.Read(ctx, &pb.ReadReplicaRequest{Block: lb.GetBlocks()[0], IncludeData: true})
		if err == nil && !equalBytes(resp.GetData(), payload) {
			err = fmt.Errorf("read %d bytes, not the %d written", len(resp.GetData()), len(payload))
		}
		return err
	}
	if err := extcluster.WaitServing(ctx, func(context.Context) error { return read() }); err != nil {
		t.Fatalf("alice's token at datanode-ext: %v", err)
	}
	const metric = "newtricks_authn_token_verifications_total"
	// The NameNode's own record of failed authentications: ipc.Server logs "Auth failed for
	// <addr>:<user> (auth:TOKEN)" for each (its RpcAuthenticationFailures in JMX is refreshed
	// only every 10 s).
	nnFailures := func() float64 {
		b, err := os.ReadFile(s.c.LogPath(cluster.NameNode))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, "Auth failed for") && strings.Contains(l, ":alice (auth:TOKEN)") {
				n++
			}
		}
		return float64(n)
	}
	verBefore := scrapeSum(t, s.lay.DataNodeMetrics[0], metric)
	if verBefore < 0 {
		t.Errorf("datanode-ext exports no %s (the flood below still runs, for the NameNode's count)", metric)
	}
	nnBefore := nnFailures()

	// 16 callers on another host (127.0.0.2: the failure budget is per remote host, and alice
	// reads from 127.0.0.1 meanwhile), each token new: alice's identifier, a random password.
	var mu sync.Mutex
	codesSeen := map[codes.Code]int{}
	var goodErrs []error
	start := time.Now()
	stop := start.Add(5 * time.Second)
	var wg sync.WaitGroup
	attacker := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}
	for g := range 16 {
		wg.Add(1)
		rc := pb.NewReplicasClient(s.dialFrom(t, attacker, dnAPI, &forgedCreds{tok: tok, rng: rand.New(rand.NewPCG(uint64(g), uint64(time.Now().UnixNano())))}))
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				_, err := rc.Read(ctx, &pb.ReadReplicaRequest{Block: lb.GetBlocks()[0], IncludeData: true})
				mu.Lock()
				codesSeen[status.Code(err)]++
				mu.Unlock()
			}
		}()
	}
	goodReads := 0
	for time.Now().Before(stop) {
		if err := read(); err != nil {
			goodErrs = append(goodErrs, err)
		}
		goodReads++
		time.Sleep(100 * time.Millisecond)
	}
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	verified := scrapeSum(t, s.lay.DataNodeMetrics[0], metric) - verBefore
	refused := scrapeSum(t, s.lay.DataNodeMetrics[0], "newtricks_authn_refusals_total")
	time.Sleep(time.Second) // the last verifications' log lines
	nnDelta := nnFailures() - nnBefore
	attempts := 0
	for _, n := range codesSeen {
		attempts += n
	}
	// Failures: the budget; alice's reads (known valid) are verifications too, one per read.
	failBudget := burst + rate*elapsed
	budget := failBudget + float64(goodReads)
	t.Logf("%d forged-token calls in %.1f s: %v; datanode-ext asked its DataNode %v times (budget %.0f), refused %v itself; "+
		"the NameNode logged %v failed token authentications (failure budget %.0f); alice: %d reads, %d failed",
		attempts, elapsed, codesSeen, verified, budget, refused, nnDelta, failBudget, goodReads, len(goodErrs))
	if codesSeen[codes.OK] > 0 {
		t.Errorf("%d forged-token calls were answered", codesSeen[codes.OK])
	}
	if codesSeen[codes.ResourceExhausted] == 0 {
		t.Errorf("no forged-token call was refused with RESOURCE_EXHAUSTED: %v", codesSeen)
	}
	if verified > budget {
		t.Errorf("datanode-ext asked its DataNode to verify %v tokens in %.1f s, more than the budget %.0f", verified, elapsed, budget)
	}
	if nnDelta > failBudget {
		t.Errorf("the NameNode logged %v failed token authentications, more than the failure budget %.0f", nnDelta, failBudget)
	}
	if len(goodErrs) > 0 {
		t.Errorf("alice's real token failed %d of %d reads during the flood: %v", len(goodErrs), goodReads, goodErrs[0])
	}
}

// dialFrom is dial with the client's end of the connection bound to local (another
// loopback address: another remote host for the server).
func (s *secureCluster) dialFrom(t *testing.T, local *net.TCPAddr, addr string, creds credentials.PerRPCCredentials) *grpc.ClientConn {
	t.Helper()
	d := net.Dialer{LocalAddr: local}
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(s.tls), grpc.WithPerRPCCredentials(creds),
		grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) { return d.DialContext(ctx, "tcp", a) }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// forgedCreds sends a new fake delegation token on every call: tok's identifier (alice's,
// well-formed, so the DataNode has to ask the NameNode) with a random password.
type forgedCreds struct {
	tok authn.Token
	mu  sync.Mutex
	rng *rand.Rand
}

func (f *forgedCreds) GetRequestMetadata(ctx context.Context, uri ...string) (map[string]string, error) {
	t := f.tok
	t.Password = make([]byte, len(f.tok.Password))
	f.mu.Lock()
	for i := range t.Password {
		t.Password[i] = byte(f.rng.Uint32())
	}
	f.mu.Unlock()
	return authn.TokenCredentials{Token: t.Encode()}.GetRequestMetadata(ctx, uri...)
}

func (*forgedCreds) RequireTransportSecurity() bool { return true }

// portOf is the port of host:port.
func portOf(addr string) string {
	i := strings.LastIndexByte(addr, ':')
	return addr[i+1:]
}

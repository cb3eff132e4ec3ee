package conformance

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/newtricks/newtricks/cmd/newtricks/doctor"
	"github.com/newtricks/newtricks/dataset"
	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/harness/datasets"
	"github.com/newtricks/newtricks/harness/extcluster"
	"github.com/newtricks/newtricks/internal/authn"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
	"github.com/newtricks/newtricks/reader"
	"github.com/newtricks/newtricks/schedule"
	"github.com/newtricks/newtricks/xformgraph"
)

// TestSecureOffload: offload on a Kerberized cluster. Every datanode-ext registers in
// namenode-ext's directory over TLS with its own Kerberos principal, locates a session's
// dataset through namenode-ext as the reader's user (newtricks acting for alice, as
// hadoop.proxyuser.newtricks.* allows) and reads pieces from its peer over TLS with
// credentials; a reader given only namenode-ext's address gets the local bytes from the
// nodes. bob's session on alice's 0700 dataset is refused by the NameNode, and a user the
// proxy rules do not cover is refused by namenode-ext.
func TestSecureOffload(t *testing.T) {
	a := artifacts(t)
	m, err := datasets.LoadMedia(os.Getenv("NEWTRICKS_XFORM_MEDIA"))
	if err != nil {
		t.Fatal(err)
	}
	s := startSecureCluster(t, a, extcluster.Options{Name: "offload-secure", DataNodes: 2,
		HDFSSite: map[string]string{"dfs.blocksize": "1048576"},
		DataNodeSite: func(int) map[string]string {
			return map[string]string{"newtricks.datanode.ext.offload.cpu.high": "1", "newtricks.datanode.ext.offload.cpu.low": "1"}
		}})
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	root := s.hdfsClient(t, cluster.PrincipalHDFS)
	if err := root.MkdirAll("/alice", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := root.Chown("/alice", "alice", "alice"); err != nil {
		t.Fatal(err)
	}
	alice := s.hdfsClient(t, "alice")
	local := filepath.Join(t.TempDir(), "ds")
	if _, err := datasets.Write(local, datasets.Media{Images: m.Images}, datasets.Layout{Shards: 2, PerShard: 16, Singles: 2}); err != nil {
		t.Fatal(err)
	}
	if err := uploadOwned(ctx, alice, local, "/alice/ds"); err != nil {
		t.Fatal(err)
	}
	idx, err := dataset.Build(ctx, dataset.HDFSFS{Client: alice}, "/alice/ds", dataset.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dataset.Store(ctx, alice, idx); err != nil {
		t.Fatal(err)
	}
	ix, err := dataset.Load(alice, "/alice/ds")
	if err != nil {
		t.Fatal(err)
	}

	aliceCreds := s.kerberos(t, "alice")
	nn := s.dial(t, s.lay.NameNodeAPI, aliceCreds)
	if err := extcluster.WaitDirectory(ctx, nn, "", len(s.lay.DataNodeAPI)); err != nil {
		t.Fatalf("datanode-ext registering over TLS with Kerberos: %v", err)
	}
	resp, err := pb.NewDataNodeDirectoryClient(nn).List(ctx, &pb.ListDataNodeExtsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var uuids []string
	for _, n := range resp.GetNodes() {
		t.Logf("directory: %v", n)
		if !n.GetTls() {
			t.Errorf("%s registered without TLS", n.GetDatanodeUuid())
		}
		uuids = append(uuids, n.GetDatanodeUuid())
	}

	spec := &schedule.Spec{Name: "secure", Seed: 4, GlobalBatch: 4, WorldSize: 1, MaxSteps: 10,
		Sources: []schedule.Source{{Name: "img", Dataset: "/alice/ds", Weight: 1, Graph: hostileGraph()}}}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	dial := func(addr string) (*grpc.ClientConn, error) {
		return grpc.NewClient(addr, append(reader.DialOptions(), grpc.WithTransportCredentials(s.tls), grpc.WithPerRPCCredentials(aliceCreds))...)
	}
	open := func(offload bool) *reader.Reader {
		store := &reader.HDFSStore{Client: alice}
		cfg := reader.Config{User: "alice", Spec: spec, Locator: reader.NamespaceLocator{Client: pb.NewNamespaceClient(nn), User: "alice"},
			Store: store, Dial: dial, MaxWait: 20 * time.Second}
		if offload {
			cfg.Directory = reader.NamespaceDirectory{Client: pb.NewDataNodeDirectoryClient(nn)}
		}
		r, err := reader.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}
	want := nextSteps(t, open(false), 10)
	r := open(true)
	paths := sameSteps(t, "secure offload", nextSteps(t, r, 10), want)
	t.Logf("alice's reader on a Kerberized cluster: %v, stats %+v", paths, r.Stats())
	if paths["offload"] == 0 || paths["local"] > 0 || r.Stats().Members != len(s.lay.DataNodeAPI) {
		t.Errorf("paths %v, members %d: want every sample from the DataNodes", paths, r.Stats().Members)
	}

	// The reader's own credentials (reader.Auth, as a trainer gives them): alice's keytab, the
	// APIs' CA and only namenode-ext's address. Every connection it makes proves alice: to
	// namenode-ext (locations, directory), to each datanode-ext (TLS as the directory's host
	// name, SPNEGO for newtricks/_HOST of that host) and to HDFS (Kerberos for hdfs/_HOST).
	readAs := func(principal string, hdfsAs *hdfs.Client) (*reader.Reader, *reader.Credentials, error) {
		a := reader.Auth{ClientConfig: authn.ClientConfig{CACert: s.sec.CACert, Krb5Conf: s.sec.KDC.Krb5Conf, SPN: "newtricks/_HOST"}}
		if principal != "" {
			a.Keytab, a.Principal = s.sec.KDC.Keytab(principal), principal
		}
		creds, err := reader.NewCredentials(a)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(creds.Close)
		ns, err := creds.DialNameNodeExt(s.lay.NameNodeAPI)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ns.Close() })
		user := "" // with credentials: the authenticated caller
		if principal == "" {
			user = "alice" // a name typed without credentials: simple authentication
		}
		if hdfsAs == nil {
			if hdfsAs, err = creds.HDFSClient(s.c.NameNodeAddrs(), user); err != nil {
				return nil, creds, err
			}
			t.Cleanup(func() { hdfsAs.Close() })
		}
		octx, ocancel := context.WithTimeout(ctx, 90*time.Second)
		defer ocancel()
		r, err := reader.Open(octx, reader.Config{User: user, Spec: spec, Auth: creds, MaxWait: 20 * time.Second,
			Locator:   reader.NamespaceLocator{Client: pb.NewNamespaceClient(ns), User: user},
			Directory: reader.NamespaceDirectory{Client: pb.NewDataNodeDirectoryClient(ns), User: user},
			Store:     &reader.HDFSStore{Client: hdfsAs}})
		if err == nil {
			t.Cleanup(func() { r.Close() })
		}
		return r, creds, err
	}
	ar, creds, err := readAs("alice", nil)
	if err != nil {
		t.Fatalf("alice's reader with her keytab: %v", err)
	}
	apaths := sameSteps(t, "secure offload, reader.Auth", nextSteps(t, ar, 10), want)
	ast := ar.Stats()
	t.Logf("alice's reader with reader.Auth (%s): %v, offloaded fraction %.2f, members %d, node error %q",
		creds.Principal(), apaths, ast.OffloadedFraction(), ast.Members, ast.NodeError)
	if ast.OffloadedFraction() <= 0 || ast.Members != len(s.lay.DataNodeAPI) || ast.NodeError != "" {
		t.Errorf("reader.Auth: offloaded fraction %v, members %d, node error %q: want offload on every node", ast.OffloadedFraction(), ast.Members, ast.NodeError)
	}
	if !strings.HasPrefix(creds.Principal(), "alice@") {
		t.Errorf("logged in as %q", creds.Principal())
	}
	// alice's delegation token instead of her keytab: the same token to namenode-ext and to
	// every node (colinmarc/hdfs cannot use it for HDFS RPC: ErrTokenHDFS, so the reads of
	// the index and fallback go through her Kerberos HDFS client here).
	tok, err := s.sec.DelegationToken(ctx, s.c, "alice")
	if err != nil {
		t.Fatal(err)
	}
	tcreds, err := reader.NewCredentials(reader.Auth{ClientConfig: authn.ClientConfig{CACert: s.sec.CACert, Token: tok}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tcreds.Close)
	if _, err := tcreds.HDFSClient(s.c.NameNodeAddrs(), ""); !errors.Is(err, reader.ErrTokenHDFS) {
		t.Errorf("HDFS with a delegation token: %v, want ErrTokenHDFS", err)
	}
	tns, err := tcreds.DialNameNodeExt(s.lay.NameNodeAPI)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tns.Close() })
	tr, err := reader.Open(ctx, reader.Config{Spec: spec, Auth: tcreds, MaxWait: 20 * time.Second,
		Locator:   reader.NamespaceLocator{Client: pb.NewNamespaceClient(tns)},
		Directory: reader.NamespaceDirectory{Client: pb.NewDataNodeDirectoryClient(tns)},
		Store:     &reader.HDFSStore{Client: alice}})
	if err != nil {
		t.Fatalf("alice's reader with her delegation token: %v", err)
	}
	t.Cleanup(func() { tr.Close() })
	tpaths := sameSteps(t, "secure offload, delegation token", nextSteps(t, tr, 10), want)
	tst := tr.Stats()
	t.Logf("alice's reader with a delegation token: %v, offloaded fraction %.2f, members %d", tpaths, tst.OffloadedFraction(), tst.Members)
	if tst.OffloadedFraction() <= 0 || tst.Members != len(s.lay.DataNodeAPI) || tst.NodeError != "" {
		t.Errorf("token: offloaded fraction %v, members %d, node error %q: want offload on every node", tst.OffloadedFraction(), tst.Members, tst.NodeError)
	}

	// bob, with his own keytab: the NameNode refuses his read of alice's 0700 dataset, at
	// Open, with a permission error (not a hang: Open is bounded above, and not a crash).
	if _, _, err := readAs("bob", nil); err == nil || !strings.Contains(strings.ToLower(err.Error()), "permission denied") {
		t.Errorf("bob's reader on /alice/ds: %v, want permission denied", err)
	} else {
		t.Logf("bob's reader: %v", err)
	}
	// No credential (TLS only): the HDFS client cannot authenticate, and with alice's HDFS
	// client for the index namenode-ext refuses the directory as UNAUTHENTICATED.
	if _, _, err := readAs("", nil); err == nil {
		t.Errorf("a reader without credentials read the index from a Kerberized HDFS")
	} else {
		t.Logf("a reader without credentials, HDFS: %v", err)
	}
	if _, _, err := readAs("", alice); err == nil || !strings.Contains(err.Error(), "Unauthenticated") {
		t.Errorf("a reader without credentials, namenode-ext: %v, want UNAUTHENTICATED", err)
	} else {
		t.Logf("a reader without credentials, namenode-ext: %v", err)
	}

	members := []*pb.SessionMember{}
	for _, u := range uuids {
		members = append(members, &pb.SessionMember{DatanodeUuid: u})
	}

	// A DataNode that holds no block of the dataset's first file, asked for the samples
	// itself: it reads them from its peer, over TLS, as alice through the proxy-user rule.
	// Peer reads are TLS and Kerberos: every node registered with TLS (checked above), a
	// Kerberized datanode-ext dials a peer only over TLS with its own SPNEGO credentials
	// (authn.PerHost; a peer without TLS is refused), and its API accepts no call without
	// them; so the peer reads counted below (newtricks_offload_peer_reads_total) crossed
	// TLS with Kerberos.
	lb, err := pb.NewNamespaceClient(nn).Locate(ctx, &pb.LocateRequest{Path: ix.FilePath(0)})
	if err != nil {
		t.Fatal(err)
	}
	x := -1
	for i, addr := range s.lay.DataNodeAPI {
		held := false
		for _, b := range lb.GetBlocks() {
			for _, l := range b.GetLocations() {
				held = held || l.GetXferAddr() == s.c.DataNodes()[i].XferAddr
			}
		}
		if !held {
			x = i
			t.Logf("DataNode %d (%s) holds none of %s", i, addr, ix.FilePath(0))
			break
		}
	}
	if x < 0 {
		t.Fatalf("both DataNodes hold %s: the peer read cannot be forced", ix.FilePath(0))
	}
	xc := pb.NewOffloadClient(s.dial(t, s.lay.DataNodeAPI[x], aliceCreds))
	open1, err := xc.OpenSession(ctx, &pb.OpenSessionRequest{Schedule: spec.ToProto(), Members: members, RawOnly: true,
		DeterminismDomain: xformgraph.Domain().String(), Sources: []*pb.SessionSource{{IndexSha256: ix.SHA256()}}})
	if err != nil {
		t.Fatalf("alice's session on DataNode %d: %v", x, err)
	}
	served := 0
	for step := uint64(0); step < 4; step++ {
		st, err := xc.GetStep(ctx, &pb.GetStepRequest{SessionId: open1.GetSessionId(), Step: step, Slots: []uint32{0, 1, 2, 3}, MaxWaitMs: 20000})
		if err != nil {
			t.Fatal(err)
		}
		for {
			smp, err := st.Recv()
			if err != nil {
				break
			}
			if smp.GetErrorCode() != 0 || len(smp.GetFrames()) == 0 {
				t.Errorf("DataNode %d, step %d sample %s: code %d %s", x, step, smp.GetKey(), smp.GetErrorCode(), smp.GetError())
				continue
			}
			served++
		}
	}
	fams, err := doctor.Scrape(ctx, http.DefaultClient, s.lay.DataNodeMetrics[x])
	if err != nil {
		t.Fatal(err)
	}
	peer := 0.0
	for _, v := range fams["newtricks_offload_peer_reads_total"] {
		peer += v
	}
	t.Logf("DataNode %d served %d samples, %v pieces read from its peer", x, served, peer)
	if served != 16 || peer == 0 {
		t.Errorf("DataNode %d served %d of 16 samples with %v peer reads: want all, from its peer", x, served, peer)
	}
	for _, tc := range []struct {
		principal, msg string
	}{
		{"bob", "Permission denied: user=bob"},      // the NameNode, for bob (newtricks may act for him)
		{"admin", "newtricks may not act as admin"}, // namenode-ext: no proxy rule for admin
	} {
		c := pb.NewOffloadClient(s.dial(t, s.lay.DataNodeAPI[0], s.kerberos(t, tc.principal)))
		_, err := c.OpenSession(ctx, &pb.OpenSessionRequest{Schedule: spec.ToProto(), Members: members,
			DeterminismDomain: xformgraph.Domain().String(), Sources: []*pb.SessionSource{{IndexSha256: ix.SHA256()}}})
		t.Logf("%s's session on alice's dataset: %v", tc.principal, err)
		if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want PermissionDenied saying %q", tc.principal, err, tc.msg)
		}
	}
}

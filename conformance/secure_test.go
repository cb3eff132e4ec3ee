package conformance

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/harness/extcluster"
	"github.com/newtricks/newtricks/internal/authn"
	"github.com/newtricks/newtricks/internal/hdfsio"
	"github.com/newtricks/newtricks/namenode-ext/hotspot/hintclient"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// fixedCreds sends one recorded metadata value on every call (a replayed or forged token).
type fixedCreds map[string]string

func (f fixedCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return f, nil
}
func (fixedCreds) RequireTransportSecurity() bool { return true }

// secureCluster is a Kerberized cluster with the hooks, its KDC and TLS material.
type secureCluster struct {
	c    *cluster.Cluster
	lay  extcluster.Layout
	sec  *cluster.Secure
	tls  credentials.TransportCredentials
	base string
}

func startSecureCluster(t *testing.T, a extcluster.Artifacts, o extcluster.Options) *secureCluster {
	t.Helper()
	base := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	sec, err := cluster.StartSecure(ctx, base, "", false)
	if err != nil {
		t.Fatalf("KDC and TLS material: %v", err)
	}
	t.Cleanup(func() {
		if err := sec.Stop(); err != nil {
			t.Errorf("stop kdc: %v", err)
		}
	})
	cfg, lay, err := extcluster.Setup(a, base, o)
	if err != nil {
		t.Fatal(err)
	}
	if o.HA != nil {
		cfg.StartupTimeout = 3 * time.Minute // ten JVMs, the quorum before the NameNodes
	}
	sec.Apply(&cfg)
	c, err := cluster.Start(ctx, cfg)
	if err != nil {
		t.Fatalf("start secure cluster: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			var b bytes.Buffer
			c.DumpLogs(&b, 60)
			dumpExtLogs(&b, filepath.Join(base, "ext-logs"), 40)
			if kdcLog, err := os.ReadFile(filepath.Join(sec.KDC.Dir, "kdc.log")); err == nil {
				fmt.Fprintf(&b, "==> kdc.log <==\n%s\n", tailLines(string(kdcLog), 20))
			}
			t.Logf("logs of secure cluster:\n%s", b.String())
		}
		if err := c.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
		os.RemoveAll(lay.SocketDir)
	})
	return &secureCluster{c: c, lay: lay, sec: sec, base: base, tls: apiTLS(t, sec)}
}

// apiTLS is what a client of the public APIs of a cluster secured by sec dials with: TLS to
// the co-processes' certificate, signed by sec's CA.
func apiTLS(t *testing.T, sec *cluster.Secure) credentials.TransportCredentials {
	t.Helper()
	pool := x509.NewCertPool()
	caPEM, err := os.ReadFile(sec.CACert)
	if err != nil || !pool.AppendCertsFromPEM(caPEM) {
		t.Fatalf("CA %s: %v", sec.CACert, err)
	}
	return credentials.NewTLS(&tls.Config{RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS12})
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// dial connects to a public API over TLS with per-call credentials (nil: none).
func (s *secureCluster) dial(t *testing.T, addr string, creds credentials.PerRPCCredentials) *grpc.ClientConn {
	t.Helper()
	opts := []grpc.DialOption{grpc.WithTransportCredentials(s.tls)}
	if creds != nil {
		opts = append(opts, grpc.WithPerRPCCredentials(creds))
	}
	cc, err := grpc.NewClient(addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// kerberos returns per-call credentials of principal, logged in from its keytab.
func (s *secureCluster) kerberos(t *testing.T, principal string) *authn.KerberosCredentials {
	t.Helper()
	cl, err := s.sec.Login(principal)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Destroy)
	return authn.NewKerberosCredentials(cl, cluster.PrincipalNewtricks)
}

func (s *secureCluster) hdfsClient(t *testing.T, principal string) *hdfs.Client {
	t.Helper()
	cl, err := s.sec.Client(s.c, principal)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

func writeSmall(c *hdfs.Client, name string, data []byte, perm os.FileMode) error {
	w, err := c.CreateFile(name, 2, blockSize, perm)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		w.Close()
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return hdfsio.CloseFile(ctx, w)
}

func wantCode(t *testing.T, what string, err error, code codes.Code) {
	t.Helper()
	if status.Code(err) != code {
		t.Fatalf("%s: %v, want %v", what, err, code)
	}
}

// readBlocks reads every block of lb through datanode-ext with the given credentials and
// returns the bytes.
func (s *secureCluster) readBlocks(t *testing.T, ctx context.Context, lb *pb.LocatedBlocks, creds credentials.PerRPCCredentials, user string) ([]byte, error) {
	t.Helper()
	var out []byte
	for _, b := range lb.GetBlocks() {
		if len(b.GetLocations()) == 0 {
			return nil, fmt.Errorf("block %d has no locations", b.GetBlockId())
		}
		addr, err := dataNodeAPIFor(s.c, s.lay, b.GetLocations()[0])
		if err != nil {
			return nil, err
		}
		resp, err := pb.NewReplicasClient(s.dial(t, addr, creds)).Read(ctx, &pb.ReadReplicaRequest{Block: b, User: user, IncludeData: true})
		if err != nil {
			return nil, err
		}
		out = append(out, resp.GetData()...)
	}
	return out, nil
}

// TestSecure runs namenode-ext and datanode-ext on a Kerberized cluster (MiniKdc, kerberos
// authentication, block tokens, SASL data transfer protection, HTTPS DataNodes) and checks
// that the public APIs act only as the authenticated caller.
func TestSecure(t *testing.T) {
	a := artifacts(t)
	s := startSecureCluster(t, a, extcluster.Options{Name: "secure", DataNodes: 2,
		// A small host-call budget so a flood of public calls reaches the bound quickly.
		HDFSSite: map[string]string{"newtricks.host.handlers": "2", "newtricks.host.queue": "2",
			// namenode-ext: no per-user limit, so the flood below meets the host-call bound;
			// datanode-ext: a low one, so one user's burst is refused and another's is not.
			"newtricks.namenode.ext.api.rate.per.user": "0",
			"newtricks.datanode.ext.api.rate.per.user": "20", "newtricks.datanode.ext.api.rate.burst": "20"}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// HDFS itself, through Kerberized colinmarc/hdfs clients (SASL on the data path).
	root := s.hdfsClient(t, cluster.PrincipalHDFS)
	for _, u := range []string{"alice", "bob"} {
		dir := "/" + u
		if err := root.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := root.Chown(dir, u, u); err != nil {
			t.Fatal(err)
		}
	}
	alice, bob := s.hdfsClient(t, "alice"), s.hdfsClient(t, "bob")
	payload := randomBytes(t, blockSize+4321)
	if err := writeSmall(alice, "/alice/f", payload, 0o600); err != nil {
		t.Fatalf("alice writes her file over SASL-protected data transfer: %v", err)
	}
	if err := writeSmall(bob, "/bob/f", payload[:100], 0o600); err != nil {
		t.Fatalf("bob writes his file: %v", err)
	}
	if _, err := bob.ReadFile("/alice/f"); !errors.Is(err, os.ErrPermission) {
		t.Fatalf("HDFS lets bob read /alice/f: %v", err)
	}

	aliceCreds, bobCreds := s.kerberos(t, "alice"), s.kerberos(t, "bob")
	nsAlice := pb.NewNamespaceClient(s.dial(t, s.lay.NameNodeAPI, aliceCreds))
	nsBob := pb.NewNamespaceClient(s.dial(t, s.lay.NameNodeAPI, bobCreds))
	if err := extcluster.WaitServing(ctx, func(ctx context.Context) error {
		_, err := nsAlice.Locate(ctx, &pb.LocateRequest{Path: "/alice/f"})
		return err
	}); err != nil {
		t.Fatalf("namenode-ext with Kerberos: %v", err)
	}
	for _, addr := range s.lay.DataNodeAPI {
		rc := pb.NewReplicasClient(s.dial(t, addr, aliceCreds))
		// An authenticated, malformed request is InvalidArgument once datanode-ext serves.
		if err := extcluster.WaitServing(ctx, func(ctx context.Context) error {
			if _, err := rc.Read(ctx, &pb.ReadReplicaRequest{}); status.Code(err) != codes.InvalidArgument {
				return fmt.Errorf("datanode-ext %s: %v", addr, err)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("alice with a ticket locates and reads her file", func(t *testing.T) {
		lb, err := nsAlice.Locate(ctx, &pb.LocateRequest{Path: "/alice/f", User: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.readBlocks(t, ctx, lb, aliceCreds, "")
		if err != nil {
			t.Fatalf("read through datanode-ext: %v", err)
		}
		if !bytes.Equal(got, payload) {
			t.Fatalf("read %d bytes, not the %d written", len(got), len(payload))
		}
	})

	t.Run("no credentials is UNAUTHENTICATED, plaintext is refused", func(t *testing.T) {
		_, err := pb.NewNamespaceClient(s.dial(t, s.lay.NameNodeAPI, nil)).Locate(ctx, &pb.LocateRequest{Path: "/alice/f", User: "alice"})
		wantCode(t, "no credentials", err, codes.Unauthenticated)
		_, err = pb.NewReplicasClient(s.dial(t, s.lay.DataNodeAPI[0], nil)).Read(ctx, &pb.ReadReplicaRequest{User: "alice"})
		wantCode(t, "datanode-ext without credentials", err, codes.Unauthenticated)
		cc, err := grpc.NewClient(s.lay.NameNodeAPI, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		_, err = pb.NewNamespaceClient(cc).Locate(pctx, &pb.LocateRequest{Path: "/alice/f", User: "alice"})
		if err == nil || status.Code(err) == codes.OK {
			t.Fatal("a plaintext call to the TLS listener was answered")
		}
		t.Logf("plaintext call: %v", err)
	})

	t.Run("bob cannot act as alice or read her file", func(t *testing.T) {
		_, err := nsBob.Locate(ctx, &pb.LocateRequest{Path: "/alice/f", User: "alice"})
		wantCode(t, "bob names alice in the request", err, codes.PermissionDenied)
		_, err = nsBob.Locate(ctx, &pb.LocateRequest{Path: "/alice/f"})
		wantCode(t, "bob locates /alice/f as himself", err, codes.PermissionDenied)
		// Alice's block tokens do not let bob read through datanode-ext as alice.
		lb, err := nsAlice.Locate(ctx, &pb.LocateRequest{Path: "/alice/f"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.readBlocks(t, ctx, lb, bobCreds, "alice"); status.Code(err) != codes.PermissionDenied {
			t.Fatalf("bob reads alice's block naming alice: %v, want PermissionDenied", err)
		}
		if _, err := s.readBlocks(t, ctx, lb, bobCreds, ""); status.Code(err) != codes.PermissionDenied {
			t.Fatalf("bob reads alice's block with her token: %v, want PermissionDenied", err)
		}
	})

	t.Run("forged and replayed SPNEGO tokens are UNAUTHENTICATED", func(t *testing.T) {
		md, err := aliceCreds.GetRequestMetadata(ctx)
		if err != nil {
			t.Fatal(err)
		}
		replay := pb.NewNamespaceClient(s.dial(t, s.lay.NameNodeAPI, fixedCreds(md)))
		if _, err := replay.Locate(ctx, &pb.LocateRequest{Path: "/alice/f"}); err != nil {
			t.Fatalf("first use of alice's token: %v", err)
		}
		_, err = replay.Locate(ctx, &pb.LocateRequest{Path: "/alice/f"})
		wantCode(t, "replayed token", err, codes.Unauthenticated)
		forged := md[authn.MetadataKey]
		forged = forged[:len(forged)-8] + "AAAAAAAA"
		_, err = pb.NewNamespaceClient(s.dial(t, s.lay.NameNodeAPI, fixedCreds{authn.MetadataKey: forged})).Locate(ctx, &pb.LocateRequest{Path: "/alice/f"})
		wantCode(t, "forged token", err, codes.Unauthenticated)
		_, err = pb.NewNamespaceClient(s.dial(t, s.lay.NameNodeAPI, fixedCreds{authn.MetadataKey: "Negotiate bm90IGEgdG9rZW4="})).Locate(ctx, &pb.LocateRequest{Path: "/alice/f"})
		wantCode(t, "garbage token", err, codes.Unauthenticated)
	})

	t.Run("proxy users as hadoop.proxyuser allows", func(t *testing.T) {
		svc := pb.NewNamespaceClient(s.dial(t, s.lay.NameNodeAPI, s.kerberos(t, "svc")))
		if _, err := svc.Locate(ctx, &pb.LocateRequest{Path: "/alice/f", User: "alice"}); err != nil {
			t.Fatalf("svc as alice (allowed): %v", err)
		}
		_, err := svc.Locate(ctx, &pb.LocateRequest{Path: "/bob/f", User: "bob"})
		wantCode(t, "svc as bob (not allowed)", err, codes.PermissionDenied)
	})

	t.Run("RecentEvents is for administrators", func(t *testing.T) {
		_, err := nsAlice.RecentEvents(ctx, &pb.RecentEventsRequest{Limit: 1})
		wantCode(t, "alice", err, codes.PermissionDenied)
		for _, admin := range []string{"admin", cluster.PrincipalHDFS} {
			ns := pb.NewNamespaceClient(s.dial(t, s.lay.NameNodeAPI, s.kerberos(t, admin)))
			if _, err := ns.RecentEvents(ctx, &pb.RecentEventsRequest{Limit: 1}); err != nil {
				t.Fatalf("%s: %v", admin, err)
			}
		}
	})

	t.Run("bob cannot see or end alice's hint", func(t *testing.T) {
		hc := hintclient.New(s.dial(t, s.lay.NameNodeAPI, aliceCreds), "")
		plan, err := hc.Create(ctx, hintclient.Hint{Paths: []string{"/alice/f"}, For: time.Minute, Readers: 2})
		if err != nil {
			t.Fatalf("alice creates a hint: %v", err)
		}
		bobHints := hintclient.New(s.dial(t, s.lay.NameNodeAPI, bobCreds), "")
		if _, err := bobHints.Cancel(ctx, plan.HintID); status.Code(err) != codes.PermissionDenied {
			t.Fatalf("bob ends alice's hint: %v, want PermissionDenied", err)
		}
		forged := hintclient.New(s.dial(t, s.lay.NameNodeAPI, bobCreds), "alice")
		if _, err := forged.Cancel(ctx, plan.HintID); status.Code(err) != codes.PermissionDenied {
			t.Fatalf("bob ends alice's hint naming alice: %v, want PermissionDenied", err)
		}
		if _, err := hc.Cancel(ctx, plan.HintID); err != nil {
			t.Fatalf("alice ends her hint: %v", err)
		}
	})

	t.Run("a job holding only a delegation token", func(t *testing.T) {
		tok, err := s.sec.DelegationToken(ctx, s.c, "alice")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := authn.DecodeToken(tok); err != nil {
			t.Fatalf("the NameNode's token string does not decode: %v", err)
		}
		creds := authn.TokenCredentials{Token: tok}
		ns := pb.NewNamespaceClient(s.dial(t, s.lay.NameNodeAPI, creds))
		lb, err := ns.Locate(ctx, &pb.LocateRequest{Path: "/alice/f"})
		if err != nil {
			t.Fatalf("Locate with alice's token: %v", err)
		}
		got, err := s.readBlocks(t, ctx, lb, creds, "")
		if err != nil || !bytes.Equal(got, payload) {
			t.Fatalf("read with alice's token through datanode-ext: %d bytes, %v", len(got), err)
		}
		_, err = ns.Locate(ctx, &pb.LocateRequest{Path: "/bob/f", User: "bob"})
		wantCode(t, "alice's token naming bob", err, codes.PermissionDenied)
		if err := s.sec.CancelDelegationToken(ctx, s.c, "alice", tok); err != nil {
			t.Fatal(err)
		}
		_, err = ns.Locate(ctx, &pb.LocateRequest{Path: "/alice/f"})
		wantCode(t, "cancelled token at namenode-ext", err, codes.Unauthenticated)
		// datanode-ext asks the NameNode and remembers a valid token for 30 s.
		took := eventually(t, 40*time.Second, "cancelled token refused by datanode-ext", func() error {
			_, err := s.readBlocks(t, ctx, lb, creds, "")
			if status.Code(err) != codes.Unauthenticated {
				return fmt.Errorf("read with the cancelled token: %v", err)
			}
			return nil
		})
		t.Logf("datanode-ext refused the cancelled token after %v", took.Round(time.Second))
	})

	t.Run("per-user rate limit: bob's burst is refused, alice is not", func(t *testing.T) {
		rcBob := pb.NewReplicasClient(s.dial(t, s.lay.DataNodeAPI[0], bobCreds))
		limited := 0
		for range 60 {
			_, err := rcBob.Read(ctx, &pb.ReadReplicaRequest{})
			if status.Code(err) == codes.ResourceExhausted && strings.Contains(err.Error(), "rate limit") {
				limited++
			} else if status.Code(err) != codes.InvalidArgument {
				t.Fatalf("bob: %v", err)
			}
		}
		if limited == 0 {
			t.Fatal("60 back-to-back calls from bob were never rate limited (20/s, burst 20)")
		}
		rcAlice := pb.NewReplicasClient(s.dial(t, s.lay.DataNodeAPI[0], aliceCreds))
		if _, err := rcAlice.Read(ctx, &pb.ReadReplicaRequest{}); status.Code(err) != codes.InvalidArgument {
			t.Fatalf("alice right after bob's burst: %v", err)
		}
		t.Logf("bob: %d of 60 calls refused by the rate limit; alice served", limited)
	})

	t.Run("a flood is refused with RESOURCE_EXHAUSTED while HDFS keeps serving", func(t *testing.T) {
		// A token call on namenode-ext holds a host handler for the NameNode's verifyToken;
		// Locate holds one for getBlockLocations: 64 concurrent callers exceed 2 + 2.
		var mu sync.Mutex
		codesSeen := map[codes.Code]int{}
		var wg sync.WaitGroup
		stop := time.Now().Add(5 * time.Second)
		for range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(stop) {
					_, err := nsAlice.Locate(ctx, &pb.LocateRequest{Path: "/alice/f"})
					mu.Lock()
					codesSeen[status.Code(err)]++
					mu.Unlock()
				}
			}()
		}
		readStart := time.Now()
		var hdfsErr error
		reads := 0
		for time.Now().Before(stop) {
			got, err := alice.ReadFile("/alice/f")
			if err != nil || !bytes.Equal(got, payload) {
				hdfsErr = fmt.Errorf("read %d bytes: %v", len(got), err)
				break
			}
			reads++
		}
		wg.Wait()
		t.Logf("flood: %v; %d HDFS reads of %d bytes in %v meanwhile", codesSeen, reads, len(payload), time.Since(readStart).Round(time.Millisecond))
		if hdfsErr != nil {
			t.Fatalf("HDFS read during the flood: %v", hdfsErr)
		}
		if codesSeen[codes.ResourceExhausted] == 0 {
			t.Fatalf("no call was refused with RESOURCE_EXHAUSTED: %v", codesSeen)
		}
		if codesSeen[codes.OK] == 0 {
			t.Fatalf("no call succeeded during the flood: %v", codesSeen)
		}
		for c := range codesSeen {
			if c != codes.OK && c != codes.ResourceExhausted {
				t.Errorf("unexpected code %v during the flood: %v", c, codesSeen)
			}
		}
	})
}

package conformance

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"
	"google.golang.org/grpc"

	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/harness/extcluster"
	"github.com/newtricks/newtricks/internal/authn"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// TestMirrorSecure mirrors a checkpoint between two Kerberized clusters (one MiniKdc): the
// mirror logs in as namenode-ext's principal (newtricks/localhost) and acts as the checkpoint's
// owner through hadoop.proxyuser.newtricks.* on both clusters, over RPC (the connection
// context names alice after the SASL exchange) and WebHDFS (SPNEGO, doas=alice).
func TestMirrorSecure(t *testing.T) {
	a := artifacts(t)
	base := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	sec, err := cluster.StartSecure(ctx, base, "", false)
	if err != nil {
		t.Fatalf("KDC and TLS material: %v", err)
	}
	t.Cleanup(func() { sec.Stop() })
	core := map[string]string{
		// The real user of the owner's calls is the mirror's principal's short name.
		"hadoop.proxyuser.newtricks.hosts": "127.0.0.1",
		"hadoop.proxyuser.newtricks.users": "alice",
		"dfs.blocksize":                    "1048576",
	}
	start := func(name string, o extcluster.Options) (*cluster.Cluster, extcluster.Layout) {
		dir := filepath.Join(base, name)
		cfg, lay, err := extcluster.Setup(a, dir, o)
		if err != nil {
			t.Fatal(err)
		}
		cfg.CoreSite = core
		sec.Apply(&cfg)
		c, err := cluster.Start(ctx, cfg)
		if err != nil {
			t.Fatalf("start %s: %v", name, err)
		}
		t.Cleanup(func() {
			if t.Failed() {
				var b bytes.Buffer
				c.DumpLogs(&b, 40)
				dumpExtLogs(&b, filepath.Join(dir, "ext-logs"), 60)
				t.Logf("logs of %s:\n%s", name, b.String())
			}
			c.Stop()
			if lay.SocketDir != "" {
				os.RemoveAll(lay.SocketDir)
			}
		})
		return c, lay
	}
	// dc-b's NameNode also serves HTTPS (the harness reads its JMX over HTTP): with Kerberos
	// the mirror's WebHDFS calls carry SPNEGO and doas, so they go over TLS (issue 25).
	ports, err := cluster.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	httpsB := fmt.Sprintf("127.0.0.1:%d", ports[0])
	siteB := map[string]string{"dfs.http.policy": "HTTP_AND_HTTPS", "dfs.namenode.https-address": httpsB}
	for k, v := range core {
		siteB[k] = v
	}
	b, _ := start("dc-b", extcluster.Options{Name: "dc-b", DataNodes: 1, NoHooks: true, NameNodeSite: siteB})
	site := map[string]string{
		"newtricks.mirror.rules":                        "ck",
		"newtricks.mirror.rule.ck.source":               "/ckpt/{job}/step_{step}",
		"newtricks.mirror.dest.namenode":                b.NameNodeAddr(),
		"newtricks.mirror.dest.http":                    httpsB,
		"newtricks.mirror.dest.http.tls.ca":             sec.KeystoreCert,
		"newtricks.mirror.source.kerberos.principal":    cluster.PrincipalHDFS,
		"newtricks.mirror.dest.http.kerberos.principal": cluster.PrincipalHTTP,
		"newtricks.mirror.kerberos.krb5-conf":           sec.KDC.Krb5Conf,
		"newtricks.mirror.retry.interval":               "200ms",
		"newtricks.ext.restart.backoff.max.ms":          "1000",
	}
	for k, v := range core {
		site[k] = v
	}
	dcA, layA := start("dc-a", extcluster.Options{Name: "dc-a", DataNodes: 1, NameNodeSite: site})

	// On a first start the event stream begins where dc-a's namenode-ext first subscribed: a
	// checkpoint closed before that is nobody's event, so the test writes only once
	// namenode-ext serves alice (it subscribes before it serves).
	kc, err := sec.Login("alice")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Destroy)
	cc, err := grpc.NewClient(layA.NameNodeAPI, grpc.WithTransportCredentials(apiTLS(t, sec)),
		grpc.WithPerRPCCredentials(authn.NewKerberosCredentials(kc, cluster.PrincipalNewtricks)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	if err := extcluster.WaitServing(ctx, func(ctx context.Context) error {
		_, err := pb.NewMirrorClient(cc).Status(ctx, &pb.MirrorStatusRequest{User: "alice"})
		return err
	}); err != nil {
		t.Fatalf("dc-a's namenode-ext never served alice's Mirror.Status: %v", err)
	}

	client := func(c *cluster.Cluster, principal string) *hdfs.Client {
		cl, err := sec.Client(c, principal)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cl.Close() })
		return cl
	}
	// As an admin would: shared checkpoint and staging directories, and the journal
	// directory owned by the mirror's principal (it writes the journal as itself).
	for _, c := range []*cluster.Cluster{dcA, b} {
		su := client(c, cluster.PrincipalHDFS)
		for _, d := range []string{"/ckpt", "/tmp/newtricks-mirror"} {
			if err := su.MkdirAll(d, 0o777); err != nil {
				t.Fatal(err)
			}
			if err := su.Chmod(d, 0o1777); err != nil {
				t.Fatal(err)
			}
		}
	}
	suA := client(dcA, cluster.PrincipalHDFS)
	if err := suA.MkdirAll("/system/newtricks/mirror", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := suA.Chown("/system/newtricks/mirror", "newtricks", ""); err != nil {
		t.Fatal(err)
	}

	alice := client(dcA, "alice")
	data := randBytes(1<<20 + 12345) // two blocks
	mirrorWrite(t, alice, "/ckpt/llama/step_3/model.bin", data)
	mirrorWrite(t, alice, "/ckpt/llama/step_3/_SUCCESS", nil)

	aliceB := client(b, "alice")
	took := eventually(t, 3*time.Minute, "checkpoint committed on dc-b", func() error {
		got, err := aliceB.ReadFile("/ckpt/llama/step_3/model.bin")
		if err != nil {
			return err
		}
		if !bytes.Equal(got, data) {
			return fmt.Errorf("model.bin on dc-b differs (%d bytes)", len(got))
		}
		return nil
	})
	for _, p := range []string{"/ckpt/llama/step_3", "/ckpt/llama/step_3/model.bin"} {
		fi, err := aliceB.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if owner := fi.(*hdfs.FileInfo).Owner(); owner != "alice" {
			t.Fatalf("%s on dc-b is owned by %q, want alice (the mirror must act as the owner, not as its principal)", p, owner)
		}
	}
	t.Logf("committed on dc-b as alice %.1fs after the marker (Kerberos on both clusters)", took.Seconds())
}

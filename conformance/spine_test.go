package conformance

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/harness/extcluster"
	"github.com/newtricks/newtricks/internal/hdfsio"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

const blockSize = 1 << 20 // small blocks so a test file spans several

// spineEvents is what the spine's namenode-ext subscribes to (RecentEvents shows only that).
const spineEvents = "CREATE,CLOSE,RENAME,UNLINK,audit:open"

// writeFile writes data to name as the client's user with the given permission. Close is
// retried while the NameNode still waits for the last block's replicas (colinmarc/hdfs
// reports that as an error instead of retrying like the Java client).
func writeFile(c *hdfs.Client, name string, data []byte, perm os.FileMode) error {
	w, err := c.CreateFile(name, 3, blockSize, perm)
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

func randomBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// findEvents returns the namespace events of one type for path.
func findEvents(resp *pb.RecentEventsResponse, typ, path string) []*pb.NamespaceRecord {
	var out []*pb.NamespaceRecord
	for _, e := range resp.GetEvents() {
		if ns := e.GetNamespace(); ns != nil && ns.GetType() == typ && ns.GetPath() == path {
			out = append(out, ns)
		}
	}
	return out
}

func findAudit(resp *pb.RecentEventsResponse, cmd, src, user string) bool {
	for _, e := range resp.GetEvents() {
		if a := e.GetAudit(); a != nil && a.GetCmd() == cmd && a.GetSrc() == src && a.GetUser() == user {
			return true
		}
	}
	return false
}

// dataNodeAPIFor maps a block location to the datanode-ext serving that DataNode.
func dataNodeAPIFor(c *cluster.Cluster, lay extcluster.Layout, loc *pb.DatanodeRef) (string, error) {
	for _, dn := range c.DataNodes() {
		if dn.XferAddr == loc.GetXferAddr() {
			return lay.DataNodeAPI[dn.Index], nil
		}
	}
	return "", fmt.Errorf("no datanode with transfer address %s", loc.GetXferAddr())
}

// TestSpine runs the spine's conformance cases in order on one real cluster with the hooks.
func TestSpine(t *testing.T) {
	a := artifacts(t)
	c, lay := startCluster(t, a, extcluster.Options{Name: "spine", DataNodes: 3,
		NameNodeSite: map[string]string{"newtricks.namenode.ext.events.subscribe": spineEvents}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	ns, nsConn, err := extcluster.NamespaceClient(lay)
	if err != nil {
		t.Fatal(err)
	}
	defer nsConn.Close()
	replicaClients := map[string]pb.ReplicasClient{}
	for _, addr := range lay.DataNodeAPI {
		cc, err := extcluster.Dial(addr)
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		replicaClients[addr] = pb.NewReplicasClient(cc)
	}
	// datanode-ext answers a malformed request with InvalidArgument once it serves.
	dnServing := func(addr string) func(context.Context) error {
		return func(ctx context.Context) error {
			_, err := replicaClients[addr].Read(ctx, &pb.ReadReplicaRequest{})
			if status.Code(err) == codes.InvalidArgument {
				return nil
			}
			return fmt.Errorf("datanode-ext %s: %v", addr, err)
		}
	}
	nnServing := func(ctx context.Context) error {
		_, err := ns.RecentEvents(ctx, &pb.RecentEventsRequest{Limit: 1})
		return err
	}

	t.Run("healthy within 10s of its hook's start", func(t *testing.T) {
		// The co-process must be up within 10 s of its hook's start, from the daemon's own log
		// timestamps (the hook's first line, then its "<kind>-ext up" line after the handshake),
		// so the figure does not depend on when this test looks, nor on how long the JVM took
		// to reach the hook (Hadoop's start-up, tens of seconds on a loaded machine). Then it
		// must serve its public API. The time from the daemon's exec is logged beside.
		check := func(name string, d cluster.Daemon, pid int, probe func(context.Context) error) {
			started, err := processStart(pid)
			if err != nil {
				t.Fatal(err)
			}
			var hook, upAt time.Time
			eventually(t, 2*time.Minute, name+": its hook's start and up lines in "+c.LogPath(d), func() error {
				var ok bool
				if hook, ok = hookStarted(c.LogPath(d)); !ok {
					return errors.New("no hook start line yet")
				}
				if upAt, ok = logTime(c.LogPath(d), coprocessUpRE); !ok {
					return errors.New("no co-process up line yet")
				}
				return nil
			})
			if took := upAt.Sub(hook); took > 10*time.Second {
				t.Errorf("%s up %v after its hook's start (bound 10 s; the daemon exec'd %v before the hook; load average %s)",
					name, took.Round(time.Millisecond), hook.Sub(started).Round(time.Millisecond), loadAverage())
			}
			wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			if err := extcluster.WaitServing(wctx, probe); err != nil {
				t.Errorf("%s up (its hook says) but not serving its API: %v", name, err)
				return
			}
			t.Logf("%s up %v after its hook's start, %v after its daemon's exec (load average %s)", name,
				upAt.Sub(hook).Round(time.Millisecond), upAt.Sub(started).Round(time.Millisecond), loadAverage())
		}
		check("namenode-ext", cluster.NameNode, c.NameNodePID(), nnServing)
		for _, dn := range c.DataNodes() {
			check(fmt.Sprintf("datanode-ext %d", dn.Index), dn.Daemon, dn.PID, dnServing(lay.DataNodeAPI[dn.Index]))
		}
		// The hooks report their co-process's health as metrics2 sources in each daemon's JMX
		// (cached by metrics2 for up to 10 s).
		beans := map[string]string{"NameNode": c.NameNodeHTTPAddr()}
		for _, dn := range c.DataNodes() {
			beans[fmt.Sprintf("DataNode-%d", dn.Index)] = dn.HTTPAddr
		}
		for name, addr := range beans {
			query := "Hadoop:service=NameNode,name=NewtricksNameNodeHook"
			if name != "NameNode" {
				query = "Hadoop:service=DataNode,name=NewtricksDataNodeHook"
			}
			eventually(t, 20*time.Second, name+" JMX CoprocessHealthy=1", func() error {
				b, err := jmx(addr, query)
				if err != nil {
					return err
				}
				if b["CoprocessHealthy"] != float64(1) || b["CoprocessStarts"] != float64(1) {
					return fmt.Errorf("%s: %v", query, b)
				}
				return nil
			})
		}
		// On the NameNode the event forwarder calls namenode-ext at least once a second (a
		// batch or the empty heartbeat); an answered call stands in for the supervisor's own
		// health check. The bean may be cached for 10 s: wait past one refresh.
		eventually(t, 25*time.Second, "NameNode JMX HealthChecksSkipped > 0", func() error {
			b, err := jmx(c.NameNodeHTTPAddr(), "Hadoop:service=NameNode,name=NewtricksNameNodeHook")
			if err != nil {
				return err
			}
			if f, _ := b["HealthChecksSkipped"].(float64); f < 1 || b["CoprocessHealthy"] != float64(1) {
				return fmt.Errorf("HealthChecksSkipped %v, CoprocessHealthy %v", b["HealthChecksSkipped"], b["CoprocessHealthy"])
			}
			return nil
		})
	})

	alice, err := c.Client("alice")
	if err != nil {
		t.Fatal(err)
	}
	defer alice.Close()
	root, err := c.Client(superuser(t))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, dir := range []string{"/data", "/secret"} {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := root.Chown(dir, "alice", "alice"); err != nil {
			t.Fatal(err)
		}
	}
	payload := randomBytes(t, 2*blockSize+12345) // three blocks, the last one partial

	t.Run("create and close events within 2s, open through the audit logger", func(t *testing.T) {
		written := time.Now()
		if err := writeFile(alice, "/data/f1", payload, 0o644); err != nil {
			t.Fatal(err)
		}
		took := eventually(t, 2*time.Second, "CREATE and CLOSE of /data/f1 at namenode-ext", func() error {
			resp, err := ns.RecentEvents(ctx, &pb.RecentEventsRequest{PathPrefix: "/data/f1"})
			if err != nil {
				return err
			}
			if len(findEvents(resp, "CREATE", "/data/f1")) == 0 {
				return errors.New("no CREATE yet")
			}
			closes := findEvents(resp, "CLOSE", "/data/f1")
			if len(closes) == 0 {
				return errors.New("no CLOSE yet")
			}
			if closes[0].GetSize() != int64(len(payload)) {
				return fmt.Errorf("CLOSE size %d, want %d", closes[0].GetSize(), len(payload))
			}
			return nil
		})
		t.Logf("CREATE+CLOSE seen %v after the writer closed (%v after it started)", took, time.Since(written).Round(time.Millisecond))

		bob, err := c.Client("bob")
		if err != nil {
			t.Fatal(err)
		}
		defer bob.Close()
		got, err := bob.ReadFile("/data/f1")
		if err != nil || !bytes.Equal(got, payload) {
			t.Fatalf("bob reads /data/f1: %v (equal=%v)", err, bytes.Equal(got, payload))
		}
		eventually(t, 2*time.Second, "audit open of /data/f1 by bob", func() error {
			resp, err := ns.RecentEvents(ctx, &pb.RecentEventsRequest{PathPrefix: "/data/f1"})
			if err != nil {
				return err
			}
			if !findAudit(resp, "open", "/data/f1", "bob") {
				return errors.New("no open event yet")
			}
			return nil
		})
		// Only the subscribed command is forwarded: bob's getfileinfo and the writer's calls
		// stop at the audit logger's first line.
		resp, err := ns.RecentEvents(ctx, &pb.RecentEventsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range resp.GetEvents() {
			if a := e.GetAudit(); a != nil && a.GetCmd() != "open" {
				t.Errorf("audit %q of %s forwarded; namenode-ext subscribed only to open", a.GetCmd(), a.GetSrc())
			}
		}
		eventually(t, 25*time.Second, "AuditFiltered > 0 in the NameNode's JMX", func() error {
			b, err := jmx(c.NameNodeHTTPAddr(), nnHookBean)
			if err != nil {
				return err
			}
			if f, _ := b["AuditFiltered"].(float64); f <= 0 {
				return fmt.Errorf("AuditFiltered = %v", b["AuditFiltered"])
			}
			return nil
		})
	})

	t.Run("every block resolves to a local replica with the written bytes", func(t *testing.T) {
		lb, err := ns.Locate(ctx, &pb.LocateRequest{Path: "/data/f1", User: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		if len(lb.GetBlocks()) != 3 {
			t.Fatalf("%d blocks, want 3", len(lb.GetBlocks()))
		}
		for _, b := range lb.GetBlocks() {
			if len(b.GetLocations()) == 0 {
				t.Fatalf("block %d has no locations", b.GetBlockId())
			}
			want := payload[b.GetOffset() : b.GetOffset()+b.GetNumBytes()]
			for _, loc := range b.GetLocations() {
				addr, err := dataNodeAPIFor(c, lay, loc)
				if err != nil {
					t.Fatal(err)
				}
				resp, err := replicaClients[addr].Read(ctx, &pb.ReadReplicaRequest{Block: b, User: "alice", IncludeData: true})
				if err != nil {
					t.Fatalf("block %d on %s: %v", b.GetBlockId(), loc.GetXferAddr(), err)
				}
				// The bytes, verified against the replica's checksums; never where the DataNode
				// keeps them (issue 25).
				if resp.GetPath() != "" || !bytes.Equal(resp.GetData(), want) || resp.GetNumBytes() != b.GetNumBytes() {
					t.Fatalf("block %d on %s: path %q, %d of %d bytes, equal=%v", b.GetBlockId(), loc.GetXferAddr(),
						resp.GetPath(), len(resp.GetData()), resp.GetNumBytes(), bytes.Equal(resp.GetData(), want))
				}
			}
		}
	})

	t.Run("a user without read permission gets no replica path or bytes", func(t *testing.T) {
		secret := randomBytes(t, 4096)
		if err := writeFile(alice, "/secret/f", secret, 0o600); err != nil {
			t.Fatal(err)
		}
		// bob cannot even get block tokens: the NameNode checks as bob.
		if _, err := ns.Locate(ctx, &pb.LocateRequest{Path: "/secret/f", User: "bob"}); status.Code(err) != codes.PermissionDenied {
			t.Fatalf("Locate as bob: %v, want PermissionDenied", err)
		}
		lb, err := ns.Locate(ctx, &pb.LocateRequest{Path: "/secret/f", User: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		b := lb.GetBlocks()[0]
		if len(b.GetToken().GetIdentifier()) == 0 {
			t.Fatal("no block access token: dfs.block.access.token.enable must be on")
		}
		addr, err := dataNodeAPIFor(c, lay, b.GetLocations()[0])
		if err != nil {
			t.Fatal(err)
		}
		rc := replicaClients[addr]
		// bob replays alice's token: the DataNode binds tokens to their user.
		if resp, err := rc.Read(ctx, &pb.ReadReplicaRequest{Block: b, User: "bob", IncludeData: true}); status.Code(err) != codes.PermissionDenied {
			t.Fatalf("Read as bob with alice's token: %v (path %q, %d bytes), want PermissionDenied", err, resp.GetPath(), len(resp.GetData()))
		}
		// No token at all.
		noToken := &pb.LocatedBlock{BlockPoolId: b.GetBlockPoolId(), BlockId: b.GetBlockId(), GenStamp: b.GetGenStamp(), NumBytes: b.GetNumBytes()}
		if _, err := rc.Read(ctx, &pb.ReadReplicaRequest{Block: noToken, User: "bob"}); status.Code(err) != codes.PermissionDenied {
			t.Fatalf("Read without token: %v, want PermissionDenied", err)
		}
		// A forged token (alice's identifier, wrong password).
		forged := &pb.LocatedBlock{BlockPoolId: b.GetBlockPoolId(), BlockId: b.GetBlockId(), GenStamp: b.GetGenStamp(), NumBytes: b.GetNumBytes(),
			Token: &pb.Token{Identifier: b.GetToken().GetIdentifier(), Password: []byte("forged-password-0000"), Kind: b.GetToken().GetKind(), Service: b.GetToken().GetService()}}
		if _, err := rc.Read(ctx, &pb.ReadReplicaRequest{Block: forged, User: "alice"}); status.Code(err) != codes.PermissionDenied {
			t.Fatalf("Read with forged token: %v, want PermissionDenied", err)
		}
		// alice's token for another block does not open this one.
		other, err := ns.Locate(ctx, &pb.LocateRequest{Path: "/data/f1", User: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		swapped := &pb.LocatedBlock{BlockPoolId: b.GetBlockPoolId(), BlockId: b.GetBlockId(), GenStamp: b.GetGenStamp(), NumBytes: b.GetNumBytes(),
			Token: other.GetBlocks()[0].GetToken()}
		if _, err := rc.Read(ctx, &pb.ReadReplicaRequest{Block: swapped, User: "alice"}); status.Code(err) != codes.PermissionDenied {
			t.Fatalf("Read with another block's token: %v, want PermissionDenied", err)
		}
		// alice herself reads it.
		resp, err := rc.Read(ctx, &pb.ReadReplicaRequest{Block: b, User: "alice", IncludeData: true})
		if err != nil || !bytes.Equal(resp.GetData(), secret) {
			t.Fatalf("Read as alice: %v", err)
		}
	})

	t.Run("kill -9 of the co-processes: restarted within 5s, HDFS serves, no CLOSE missed", func(t *testing.T) {
		bob, err := c.Client("bob")
		if err != nil {
			t.Fatal(err)
		}
		defer bob.Close()
		closeSeen := func(names []string) error {
			resp, err := ns.RecentEvents(ctx, &pb.RecentEventsRequest{PathPrefix: "/data/outage-"})
			if err != nil {
				return err
			}
			for _, name := range names {
				if len(findEvents(resp, "CLOSE", name)) == 0 {
					return fmt.Errorf("no CLOSE for %s (of %d files)", name, len(names))
				}
			}
			return nil
		}
		// Before the outage: the running namenode-ext has every CLOSE so far. (Its memory dies
		// with it; what matters is that nothing acknowledged later is lost.)
		var before []string
		for i := 0; i < 3; i++ {
			name := fmt.Sprintf("/data/outage-pre-%d", i)
			if err := writeFile(alice, name, payload[:4096], 0o644); err != nil {
				t.Fatal(err)
			}
			before = append(before, name)
		}
		eventually(t, 2*time.Second, "CLOSE events before the outage", func() error { return closeSeen(before) })

		// The outage: namenode-ext is frozen first, so everything from here on is still
		// unacknowledged when it is killed, then both co-processes get SIGKILL. Writers and
		// readers run throughout and must all succeed.
		var failures atomic.Int64
		var writtenMu sync.Mutex
		var written []string
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprintf("/data/outage-%03d", i)
				if err := writeFile(alice, name, payload[:4096+i], 0o644); err != nil {
					failures.Add(1)
					t.Errorf("write %s during outage: %v", name, err)
					continue
				}
				writtenMu.Lock()
				written = append(written, name)
				writtenMu.Unlock()
			}
		}()
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				got, err := bob.ReadFile("/data/f1")
				if err != nil || !bytes.Equal(got, payload) {
					failures.Add(1)
					t.Errorf("read during outage: %v", err)
				}
			}
		}()

		oldNN, err := c.Children(cluster.NameNode, "namenode-ext")
		if err != nil || len(oldNN) != 1 {
			t.Fatalf("namenode-ext pids %v: %v", oldNN, err)
		}
		if err := syscall.Kill(oldNN[0], syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		if _, err := c.KillChildren(cluster.NameNode, "namenode-ext"); err != nil {
			t.Fatalf("kill namenode-ext: %v", err)
		}
		oldDN, err := c.KillChildren(cluster.DataNode(0), "datanode-ext")
		if err != nil || len(oldDN) == 0 {
			t.Fatalf("kill datanode-ext 0: %v (pids %v)", err, oldDN)
		}
		killed := time.Now()
		restarted := func(d cluster.Daemon, name string, old []int, probe func(context.Context) error) {
			eventually(t, 5*time.Second, name+" restarted", func() error {
				pids, err := c.Children(d, name)
				if err != nil || len(pids) == 0 || pids[0] == old[0] {
					return fmt.Errorf("no new %s process (%v, %v)", name, pids, err)
				}
				pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
				defer cancel()
				return probe(pctx)
			})
		}
		restarted(cluster.NameNode, "namenode-ext", oldNN, nnServing)
		restarted(cluster.DataNode(0), "datanode-ext", oldDN, dnServing(lay.DataNodeAPI[0]))
		t.Logf("both co-processes serving again %v after kill -9", time.Since(killed).Round(time.Millisecond))
		time.Sleep(500 * time.Millisecond)
		close(stop)
		wg.Wait()
		if failures.Load() > 0 {
			t.Fatalf("%d HDFS operations failed during the outage", failures.Load())
		}
		writtenMu.Lock()
		defer writtenMu.Unlock()
		if len(written) == 0 {
			t.Fatal("no file written during the outage")
		}
		eventually(t, 5*time.Second, "a CLOSE event for every file written across the restart", func() error { return closeSeen(written) })
		t.Logf("%d files written during the outage, every CLOSE delivered to the new namenode-ext", len(written))
	})
}

// TestDaemonsServeWithoutWorkingCoprocess: a missing binary and one that exits at once
// must not stop the NameNode or the DataNodes.
func TestDaemonsServeWithoutWorkingCoprocess(t *testing.T) {
	a := artifacts(t)
	c, _ := startCluster(t, a, extcluster.Options{Name: "broken-ext", DataNodes: 3,
		NameNodeExt: "/nonexistent/namenode-ext", DataNodeExt: "/bin/false"})
	cl, err := c.Client("alice")
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	data := randomBytes(t, 3*blockSize/2)
	root, err := c.Client(superuser(t))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := root.Chmod("/", 0o777); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		name := fmt.Sprintf("/f%d", i)
		if err := writeFile(cl, name, data, 0o644); err != nil {
			t.Fatalf("write %s: %v", name, err)
		}
		got, err := cl.ReadFile(name)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read %s: %v", name, err)
		}
	}
	// Both hooks kept trying, counted every failure in JMX and backed off exponentially (the
	// daemon logs each wait: 500 ms doubling up to newtricks.ext.restart.backoff.max.ms).
	daemons := []struct {
		name, http, bean string
		log              string
	}{
		{"NameNode (missing binary)", c.NameNodeHTTPAddr(), "Hadoop:service=NameNode,name=NewtricksNameNodeHook", c.LogPath(cluster.NameNode)},
		{"DataNode 0 (/bin/false)", c.DataNodes()[0].HTTPAddr, "Hadoop:service=DataNode,name=NewtricksDataNodeHook", c.LogPath(cluster.DataNode(0))},
	}
	for _, d := range daemons {
		var waits []int
		eventually(t, 30*time.Second, d.name+": 3 start failures with doubling waits", func() error {
			waits = restartWaits(d.log)
			if len(waits) < 3 {
				return fmt.Errorf("%d restart waits logged: %v", len(waits), waits)
			}
			return nil
		})
		for i := 1; i < len(waits); i++ {
			if waits[i] != min(2*waits[i-1], 30000) {
				t.Errorf("%s: restart waits %v do not double", d.name, waits)
				break
			}
		}
		eventually(t, 25*time.Second, d.name+": JMX CoprocessStartFailures >= 3", func() error {
			b, err := jmx(d.http, d.bean)
			if err != nil {
				return err
			}
			if f, _ := b["CoprocessStartFailures"].(float64); f < 3 || b["CoprocessHealthy"] != float64(0) || b["CoprocessStarts"] != float64(0) {
				return fmt.Errorf("%v", b)
			}
			return nil
		})
		t.Logf("%s: restart waits %v ms", d.name, waits)
	}
}

var restartWaitRE = regexp.MustCompile(`restarting in (\d+) ms`)

var hookStartRE = regexp.MustCompile(`(?m)^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) \S+ \S+ \[newtricks-(?:namenode|datanode)-plugin-start\]`)

// hookStarted returns when a daemon's hook started (its first log line from the plugin's start
// thread; the harness's daemons log in UTC).
func hookStarted(logPath string) (time.Time, bool) { return logTime(logPath, hookStartRE) }

// coprocessUpRE matches the hook's line for a co-process that completed its handshake.
var coprocessUpRE = regexp.MustCompile(`(?m)^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) .*newtricks: (?:namenode|datanode)-ext up \(generation`)

// logTime returns the timestamp of the first line of a daemon log that re matches (its first
// group is the timestamp).
func logTime(logPath string, re *regexp.Regexp) (time.Time, bool) {
	data, err := os.ReadFile(logPath)
	if err != nil {
		return time.Time{}, false
	}
	m := re.FindSubmatch(data)
	if m == nil {
		return time.Time{}, false
	}
	at, err := time.ParseInLocation("2006-01-02 15:04:05,000", string(m[1]), time.Local)
	return at, err == nil
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// restartWaits returns the waits a hook logged between start attempts, in order.
func restartWaits(logPath string) []int {
	data, err := os.ReadFile(logPath)
	if err != nil {
		return nil
	}
	var out []int
	for _, m := range restartWaitRE.FindAllStringSubmatch(string(data), -1) {
		n, _ := strconv.Atoi(m[1])
		out = append(out, n)
	}
	return out
}

package conformance

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/harness/extcluster"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// TestHostLockSlices measures what the largest InspectFiles request (4096 files, every block
// of each) costs the NameNode's writers, on a real NameNode (issue 25): first with the read
// lock held for the whole call (newtricks.host.lock.max-hold.ms set to an hour: one slice, as
// before the slices), then, after a restart, with the default 5 ms slices. A writer creates
// directories throughout; the longest of its calls is how long the NameNode kept writers out.
//
// It is a measurement, not a check of behaviour (the unit test InspectSlicesTest checks the
// slicing itself), so it runs only under `make bench-hostlock` (NEWTRICKS_BENCH_HOSTLOCK=1).
func TestHostLockSlices(t *testing.T) {
	if os.Getenv("NEWTRICKS_BENCH_HOSTLOCK") != "1" {
		t.Skip("measurement of the NameNode read lock: run `make bench-hostlock`")
	}
	a := artifacts(t)
	const oneHold = "3600000"
	c, lay := startCluster(t, a, extcluster.Options{Name: "hostlock", DataNodes: 1,
		NameNodeSite: map[string]string{
			"dfs.namenode.fs-limits.min-block-size": "0",
			"newtricks.host.lock.max-hold.ms":       oneHold,
		}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	su, err := user.Current() // the daemons' user: the HDFS superuser
	if err != nil {
		t.Fatal(err)
	}
	root, err := c.Client(su.Username)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()

	// One file of 1000 blocks of 1 KiB; the request names it 4096 times: 4,096,000 blocks.
	// Written with Hadoop's own client, which waits out NotReplicatedYetException between
	// blocks (the Go client does not).
	const blocks, blockSize = 1000, 1024
	local := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(local, bytes.Repeat([]byte{7}, blocks*blockSize), 0o644); err != nil {
		t.Fatal(err)
	}
	lib := a.HadoopLibDir
	if lib == "" {
		lib = cluster.DefaultHadoopLib()
	}
	put := exec.CommandContext(ctx, "java", "-XX:+IgnoreUnrecognizedVMOptions", "--add-opens=java.base/java.lang=ALL-UNNAMED",
		"-cp", c.DataNodes()[0].ConfDir+":"+filepath.Join(lib, "*"),
		"org.apache.hadoop.fs.FsShell", "-D", fmt.Sprintf("dfs.blocksize=%d", blockSize), "-D", "dfs.replication=1",
		"-put", local, "/big")
	put.Env = append(os.Environ(), "HADOOP_USER_NAME="+su.Username)
	if out, err := put.CombinedOutput(); err != nil {
		t.Fatalf("hdfs dfs -put: %v\n%s", err, out)
	}
	st, err := root.Stat("/big")
	if err != nil {
		t.Fatal(err)
	}
	id := int64(st.Sys().(interface{ GetFileId() uint64 }).GetFileId())
	if err := root.MkdirAll("/w", 0o755); err != nil {
		t.Fatal(err)
	}
	req := &pb.InspectFilesRequest{Service: true, Holders: true}
	for i := 0; i < 4096; i++ {
		req.FileIds = append(req.FileIds, id)
		req.Want = append(req.Want, 1)
		req.FromBlock = append(req.FromBlock, 0)
	}

	type result struct {
		call               time.Duration
		writes             int
		writeMax, writeP50 time.Duration
	}
	measure := func(t *testing.T, round string) result {
		// After a restart the hook starts its host service in the background.
		eventually(t, 2*time.Minute, "NameNode host socket", func() error {
			socks, err := filepath.Glob(filepath.Join(lay.SocketDir, "nn-*.sock"))
			if err != nil || len(socks) == 0 {
				return fmt.Errorf("none in %s (%v)", lay.SocketDir, err)
			}
			return nil
		})
		host := nameNodeHost(t, lay)
		var small *pb.InspectFilesResponse
		eventually(t, time.Minute, "host service answers", func() error {
			small, err = host.InspectFiles(ctx, &pb.InspectFilesRequest{Service: true, FileIds: []int64{id}})
			return err
		})
		if n := small.Files[0].GetBlocks(); n != blocks {
			t.Fatalf("/big has %d blocks, want %d", n, blocks)
		}
		// The writer runs alone first (warming the NameNode up after a restart, and showing
		// the machine's own noise), then during the call; only writes that start while the
		// call runs count.
		var mu sync.Mutex
		var callStart, callEnd time.Time
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var lat, alone []time.Duration
		var slow []string
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				if err := root.Mkdir(fmt.Sprintf("/w/%s-%d", round, i), 0o755); err != nil {
					t.Errorf("mkdir: %v", err)
					return
				}
				d := time.Since(start)
				mu.Lock()
				switch {
				case !callStart.IsZero() && !start.Before(callStart) && (callEnd.IsZero() || start.Before(callEnd)):
					lat = append(lat, d)
					if d > 100*time.Millisecond {
						slow = append(slow, fmt.Sprintf("%v at +%v", d.Round(time.Millisecond), start.Sub(callStart).Round(time.Millisecond)))
					}
				case callStart.IsZero():
					alone = append(alone, d)
				}
				mu.Unlock()
			}
		}()
		time.Sleep(3 * time.Second)
		mu.Lock()
		callStart = time.Now()
		mu.Unlock()
		resp, err := host.InspectFiles(ctx, req)
		mu.Lock()
		callEnd = time.Now()
		call := callEnd.Sub(callStart)
		mu.Unlock()
		close(stop)
		wg.Wait()
		if err != nil {
			t.Fatal(err)
		}
		sort.Slice(alone, func(i, j int) bool { return alone[i] < alone[j] })
		if len(alone) > 0 {
			t.Logf("%s: writer alone: %d mkdirs, median %v, longest %v", round, len(alone),
				alone[len(alone)/2].Round(time.Microsecond), alone[len(alone)-1].Round(time.Millisecond))
		}
		if len(slow) > 0 {
			t.Logf("%s: mkdirs over 100 ms during the call: %v", round, slow)
		}
		if len(resp.Files) != 4096 || resp.Files[4095].GetBlocks() != blocks || resp.Files[0].GetMinLiveReplicas() != 1 {
			t.Fatalf("answer: %d files, last %+v", len(resp.Files), resp.Files[len(resp.Files)-1])
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		if len(lat) == 0 {
			t.Fatal("no write completed")
		}
		r := result{call: call, writes: len(lat), writeMax: lat[len(lat)-1], writeP50: lat[len(lat)/2]}
		t.Logf("%s: InspectFiles of 4096 x %d blocks took %v; %d mkdirs meanwhile, median %v, longest %v",
			round, blocks, r.call.Round(time.Millisecond), r.writes, r.writeP50.Round(time.Microsecond), r.writeMax.Round(time.Millisecond))
		return r
	}

	before := measure(t, "one-hold")

	// Default slices: rewrite the NameNode's hdfs-site.xml and restart it.
	site := filepath.Join(c.BaseDir(), string(cluster.NameNode), "conf", "hdfs-site.xml")
	b, err := os.ReadFile(site)
	if err != nil {
		t.Fatal(err)
	}
	old := []byte("<value>" + oneHold + "</value>")
	if bytes.Count(b, old) != 1 {
		t.Fatalf("%s: %d values %s", site, bytes.Count(b, old), old)
	}
	if err := os.WriteFile(site, bytes.Replace(b, old, []byte("<value>5</value>"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.RestartNameNode(ctx); err != nil {
		t.Fatal(err)
	}
	after := measure(t, "5ms-slices")

	// The longest write waited for the whole call before; now for a slice (plus the noise of a
	// loaded machine, so only a clear difference is asserted).
	if before.writeMax < before.call/2 {
		t.Logf("one hold did not keep the writer out for most of the call (%v of %v): machine too noisy to compare", before.writeMax, before.call)
		return
	}
	if after.writeMax*4 > before.writeMax {
		t.Fatalf("with 5 ms slices the longest write took %v, with one hold %v", after.writeMax, before.writeMax)
	}
}

// Command hookstart measures how long the hooks take to get their co-processes serving: from
// the exec of each daemon's JVM (its start time in /proc) until namenode-ext and datanode-ext
// answer on their public APIs. It starts a small real cluster per run (one NameNode, one
// DataNode), optionally with -hogs busy-looping processes competing for the CPU, and prints
// the median (min, max). With -baseline JAR it alternates with clusters using that hooks jar
// (an earlier build), to compare.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/harness/extcluster"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

func main() {
	runs := flag.Int("runs", 3, "clusters started per jar")
	hogs := flag.Int("hogs", 0, "busy-looping processes that compete for the CPU while each cluster starts")
	baseline := flag.String("baseline", "", "hooks jar to compare with (an earlier build)")
	flag.Parse()
	a, err := extcluster.ArtifactsFromEnv()
	if err != nil {
		log.Fatal(err)
	}
	list := []string{a.HooksJar}
	if *baseline != "" {
		list = append(list, *baseline)
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("hookstart: %d runs per jar, %d CPU hogs, %d cores; load average %s", *runs, *hogs, numCPU(), load)
	res := map[string]map[string][]float64{}
	// Run -1 is not counted (page cache, and the class data sharing archive if a first start
	// has to build it).
	for r := -1; r < *runs; r++ {
		order := append([]string(nil), list...)
		if r%2 != 0 {
			sort.Sort(sort.Reverse(sort.StringSlice(order)))
		}
		for _, jar := range order {
			a.HooksJar = jar
			m, err := once(a, *hogs)
			if err != nil {
				log.Fatalf("%s: %v", jar, err)
			}
			if r < 0 {
				fmt.Printf("warm-up %s: namenode-ext %.2f s, datanode-ext %.2f s\n", filepath.Base(jar), m["namenode-ext"], m["datanode-ext"])
				continue
			}
			if res[jar] == nil {
				res[jar] = map[string][]float64{}
			}
			for k, v := range m {
				res[jar][k] = append(res[jar][k], v)
			}
			fmt.Printf("run %d %s: namenode-ext %.2f s, datanode-ext %.2f s after exec (cluster ready %.2f s after the NameNode exec)\n",
				r+1, filepath.Base(jar), m["namenode-ext"], m["datanode-ext"], m["cluster ready"])
		}
	}
	for _, jar := range list {
		label := "new"
		if jar == *baseline {
			label = "baseline"
		}
		fmt.Printf("%s %s:", label, jar)
		for _, k := range []string{"namenode-ext", "datanode-ext", "cluster ready"} {
			v := res[jar][k]
			sort.Float64s(v)
			fmt.Printf("  %s %.2f s (%.2f, %.2f)", k, v[len(v)/2], v[0], v[len(v)-1])
		}
		fmt.Println()
	}
}

func numCPU() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(b), "processor\t:")
}

// once starts one cluster and returns seconds from each daemon's exec to its co-process
// serving, and to the cluster being ready (NameNode serving, DataNode registered).
func once(a extcluster.Artifacts, hogs int) (map[string]float64, error) {
	base, err := os.MkdirTemp("", "hookstart-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(base)
	cfg, lay, err := extcluster.Setup(a, base, extcluster.Options{Name: "hookstart", DataNodes: 1})
	if err != nil {
		return nil, err
	}
	var procs []*exec.Cmd
	for i := 0; i < hogs; i++ {
		c := exec.Command("sh", "-c", "while :; do :; done")
		if err := c.Start(); err != nil {
			return nil, err
		}
		procs = append(procs, c)
	}
	defer func() {
		for _, c := range procs {
			_ = c.Process.Signal(syscall.SIGKILL)
			_ = c.Wait()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// Poll both APIs from before the daemons start, so the first answer is seen within 20 ms.
	var mu sync.Mutex
	first := map[string]time.Time{}
	poll := func(name, addr string, ok func(err error) bool, call func(context.Context, *pb.RecentEventsRequest) error) {
		for ctx.Err() == nil {
			c, cancel := context.WithTimeout(ctx, time.Second)
			err := call(c, &pb.RecentEventsRequest{Limit: 1})
			cancel()
			if ok(err) {
				mu.Lock()
				first[name] = time.Now()
				mu.Unlock()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	nnc, err := extcluster.Dial(lay.NameNodeAPI)
	if err != nil {
		return nil, err
	}
	defer nnc.Close()
	dnc, err := extcluster.Dial(lay.DataNodeAPI[0])
	if err != nil {
		return nil, err
	}
	defer dnc.Close()
	ns := pb.NewNamespaceClient(nnc)
	rc := pb.NewReplicasClient(dnc)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		poll("namenode-ext", lay.NameNodeAPI, func(err error) bool { return err == nil },
			func(c context.Context, r *pb.RecentEventsRequest) error { _, err := ns.RecentEvents(c, r); return err })
	}()
	go func() {
		defer wg.Done()
		// datanode-ext answers a malformed request with InvalidArgument once it serves.
		poll("datanode-ext", lay.DataNodeAPI[0], func(err error) bool { return status.Code(err) == codes.InvalidArgument },
			func(c context.Context, _ *pb.RecentEventsRequest) error {
				_, err := rc.Read(c, &pb.ReadReplicaRequest{})
				return err
			})
	}()
	c, err := cluster.Start(ctx, cfg)
	if err != nil {
		cancel()
		wg.Wait()
		return nil, err
	}
	ready := time.Now()
	defer c.Stop()
	wg.Wait()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("co-processes not serving within 5 minutes")
	}
	nnStart, err := processStart(c.NameNodePID())
	if err != nil {
		return nil, err
	}
	dnStart, err := processStart(c.DataNodes()[0].PID)
	if err != nil {
		return nil, err
	}
	return map[string]float64{
		"namenode-ext":  first["namenode-ext"].Sub(nnStart).Seconds(),
		"datanode-ext":  first["datanode-ext"].Sub(dnStart).Seconds(),
		"cluster ready": ready.Sub(nnStart).Seconds(),
	}, nil
}

// processStart is when pid was started, from /proc (10 ms resolution).
func processStart(pid int) (time.Time, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return time.Time{}, err
	}
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ticks, err := strconv.ParseInt(fields[19], 10, 64)
	if err != nil {
		return time.Time{}, err
	}
	up, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return time.Time{}, err
	}
	uptime, err := strconv.ParseFloat(strings.Fields(string(up))[0], 64)
	if err != nil {
		return time.Time{}, err
	}
	const hz = 100 // USER_HZ on Linux/amd64
	boot := time.Now().Add(-time.Duration(uptime * float64(time.Second)))
	return boot.Add(time.Duration(ticks) * time.Second / hz), nil
}

// Command nn measures what the newtricks hooks cost the NameNode: Hadoop's own
// NNThroughputBenchmark (hadoop-hdfs tests jar) runs against two real NameNodes started side
// by side, one plain and one with the hooks and namenode-ext, alternating rounds so that
// machine noise hits both alike. It prints ops/s per operation (median over rounds) and the
// ratio hooks/plain, and as its last line `BENCH nn-overhead min_ratio=<x>`.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/newtricks/newtricks/internal/cluster"
	"github.com/newtricks/newtricks/internal/exttest"
)

func main() {
	ops := flag.String("ops", "create,mkdirs,open,fileStatus,rename,delete", "NNThroughputBenchmark operations")
	rounds := flag.Int("rounds", 5, "measured rounds per NameNode (alternating), after one warm-up round")
	files := flag.Int("files", 4000, "files (or dirs) per operation")
	threads := flag.Int("threads", 4, "client threads")
	flag.Parse()
	if err := run(strings.Split(*ops, ","), *rounds, *files, *threads); err != nil {
		log.Fatal(err)
	}
}

type result map[string][]float64 // op -> ops/s per round

// cpuTicks returns the CPU time (user+system, clock ticks) of a NameNode JVM and its
// co-processes: what the daemon's host pays, independent of how busy the machine is.
func cpuTicks(c *cluster.Cluster) int64 {
	pids := []int{c.NameNodePID()}
	if kids, err := c.Children(cluster.NameNode, ""); err == nil {
		pids = append(pids, kids...)
	}
	var total int64
	for _, pid := range pids {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
		u, _ := strconv.ParseInt(f[11], 10, 64)
		s, _ := strconv.ParseInt(f[12], 10, 64)
		total += u + s
	}
	return total
}

func run(ops []string, rounds, files, threads int) error {
	a, err := exttest.ArtifactsFromEnv()
	if err != nil {
		return err
	}
	base, err := os.MkdirTemp("", "bench-nn-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(base)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()

	start := func(name string, noHooks bool) (*cluster.Cluster, error) {
		cfg, _, err := exttest.Setup(a, filepath.Join(base, name), exttest.Options{Name: name, NoHooks: noHooks, DataNodes: 1})
		if err != nil {
			return nil, err
		}
		// The harness limits JIT to C1 for fast test start-up; a throughput benchmark needs
		// the NameNode's steady state.
		cfg.FullJIT = true
		return cluster.Start(ctx, cfg)
	}
	plain, err := start("plain", true)
	if err != nil {
		return fmt.Errorf("start plain cluster: %w", err)
	}
	defer plain.Stop()
	hooked, err := start("hooks", false)
	if err != nil {
		return fmt.Errorf("start cluster with hooks: %w", err)
	}
	defer hooked.Stop()

	res := map[string]result{"plain": {}, "hooks": {}}
	cpu := map[string]result{"plain": {}, "hooks": {}} // NameNode CPU ticks per 1000 ops
	for r := -1; r < rounds; r++ {                     // round -1 warms up both JVMs' JIT and is not counted
		for _, side := range []struct {
			name string
			c    *cluster.Cluster
		}{{"plain", plain}, {"hooks", hooked}} {
			for _, op := range ops {
				before := cpuTicks(side.c)
				v, err := nnbench(ctx, a, side.c, op, files, threads)
				if err != nil {
					return fmt.Errorf("%s round %d %s: %w", side.name, r, op, err)
				}
				ticks := float64(cpuTicks(side.c)-before) * 1000 / float64(files)
				if r < 0 {
					fmt.Printf("warm-up %-6s %-11s %10.0f ops/s\n", side.name, op, v)
					continue
				}
				res[side.name][op] = append(res[side.name][op], v)
				cpu[side.name][op] = append(cpu[side.name][op], ticks)
				fmt.Printf("round %d %-6s %-11s %10.0f ops/s %8.1f NameNode CPU ticks/1000 ops (incl. its inputs)\n", r+1, side.name, op, v, ticks)
			}
		}
	}
	fmt.Printf("\n%-11s %14s %14s %7s %16s %16s\n", "operation", "plain ops/s", "hooks ops/s", "ratio", "plain cpu/kop", "hooks cpu/kop")
	minRatio := 0.0
	for i, op := range ops {
		p, h := median(res["plain"][op]), median(res["hooks"][op])
		ratio := h / p
		fmt.Printf("%-11s %14.0f %14.0f %7.3f %16.1f %16.1f\n", op, p, h, ratio, median(cpu["plain"][op]), median(cpu["hooks"][op]))
		if i == 0 || ratio < minRatio {
			minRatio = ratio
		}
	}
	fmt.Printf("(medians of %d rounds after a warm-up, %d files, %d threads; NameNodes run side by side and alternate;\n"+
		" cpu/kop: CPU ticks of the NameNode JVM and its co-process per 1000 ops, including the op's input generation)\n", rounds, files, threads)
	fmt.Printf("BENCH nn-overhead min_ratio=%.3f\n", minRatio)
	return nil
}

var (
	statsRE = regexp.MustCompile(`--- (\w+) stats\s+---`)
	opsRE   = regexp.MustCompile(`Ops per sec:\s*([0-9.]+)`)
)

// nnbench runs one NNThroughputBenchmark operation against c's NameNode and returns ops/s.
func nnbench(ctx context.Context, a exttest.Artifacts, c *cluster.Cluster, op string, files, threads int) (float64, error) {
	// NNThroughputBenchmark prints its stats through log4j: give it a console appender.
	confDir := filepath.Join(os.TempDir(), "bench-nn-log4j")
	if err := os.MkdirAll(confDir, 0o755); err != nil {
		return 0, err
	}
	const log4j = "log4j.rootLogger=INFO,console\n" +
		"log4j.appender.console=org.apache.log4j.ConsoleAppender\n" +
		"log4j.appender.console.layout=org.apache.log4j.PatternLayout\n" +
		"log4j.appender.console.layout.ConversionPattern=%m%n\n"
	if err := os.WriteFile(filepath.Join(confDir, "log4j.properties"), []byte(log4j), 0o644); err != nil {
		return 0, err
	}
	args := []string{"-Xmx512m", "-cp", confDir + ":" + a.HadoopLibDir + "/*",
		"org.apache.hadoop.hdfs.server.namenode.NNThroughputBenchmark",
		"-fs", c.URI(), "-op", op, "-threads", strconv.Itoa(threads)}
	if op == "mkdirs" {
		args = append(args, "-dirs", strconv.Itoa(files))
	} else {
		args = append(args, "-files", strconv.Itoa(files))
	}
	args = append(args, "-baseDirName", fmt.Sprintf("/nnbench-%d", time.Now().UnixNano()))
	cmd := exec.CommandContext(ctx, "java", args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("%v\n%s", err, tail(string(out), 30))
	}
	// Stats are printed per operation; "open", "rename" and "delete" first create their
	// inputs, so take the block named after op.
	text := string(out)
	for _, loc := range statsRE.FindAllStringSubmatchIndex(text, -1) {
		if !strings.EqualFold(text[loc[2]:loc[3]], op) {
			continue
		}
		m := opsRE.FindStringSubmatch(text[loc[1]:])
		if m == nil {
			break
		}
		return strconv.ParseFloat(m[1], 64)
	}
	return 0, fmt.Errorf("no %q stats in NNThroughputBenchmark output:\n%s", op, tail(text, 30))
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

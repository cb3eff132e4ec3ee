// Command offload measures trick 3 (issue 10, docs/offload.md) on a real cluster: a trainer
// pinned to CPU 0 runs a synthetic model step (a compute loop of fixed length on one locked
// thread) and loads its data through the Go reader; the NameNode, the DataNodes and their
// datanode-ext co-processes are pinned to CPU 1. The dataset mixes H.264 clips (made by the
// ffmpeg CLI) and JPEGs (the xformgraph test media) in WebDataset tar shards. In one run,
// interleaved in alternating order, it measures:
//
//   - (a) baseline: the trainer reads raw bytes from HDFS and transforms locally with the same
//     graph (what a DataLoader does today);
//   - (b) offload: the DataNodes transform, the trainer receives tensors;
//   - (c) offload while another process keeps the storage CPU busy, so that the DataNodes shed
//     and answer raw: the trainer transforms locally again and must be no more than 10%
//     slower than (a).
//
// It reports per-step stall P50/P99 (the time data loading kept the model from running in a
// step: waiting in Next, plus the trainer-core CPU the loading threads used while the model
// step was ready to run), the lost time per step (wall time minus the model step's CPU time:
// the stall plus whatever else took the trainer core, other processes included), the wait in
// Next alone, the trainer CPU seconds
// spent on loading (process CPU minus the CPU of the model step calls), steps/s, the reader's
// heap with 1 vs 8 sources of the same total size, and DataNode read throughput with and
// without a full transform load. A model-only run (m) in every round gives the floor of the
// lost time: the same loop with no loading at all. It writes a PNG of per-step stall and, as its
// last line, `BENCH offload p99_reduction=<x> stall_reduction=<x> trainer_cpu_reduction=<x>
// fallback_penalty=<x> mem_8_vs_1=<x>`.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/colinmarc/hdfs/v2"

	"github.com/newtricks/newtricks/bench/internal/plot"
	"github.com/newtricks/newtricks/bench/internal/stats"
	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/harness/datasets"
	"github.com/newtricks/newtricks/harness/extcluster"
	"github.com/newtricks/newtricks/internal/hdfsio"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
	xformv1 "github.com/newtricks/newtricks/proto/gen/xformv1"
	"github.com/newtricks/newtricks/reader"
	"github.com/newtricks/newtricks/schedule"
	"github.com/newtricks/newtricks/xformgraph"
)

type options struct {
	steps, rounds, warmup, batch int
	model                        time.Duration
	png                          string
	media                        string
	profile                      string
	round                        int
	only                         string
	modelRuns                    string
}

func main() {
	var o options
	burn := flag.Bool("burn", false, "internal: busy-loop forever (the storage-core load of run c)")
	flag.IntVar(&o.steps, "steps", 60, "measured steps per run")
	flag.IntVar(&o.rounds, "rounds", 3, "rounds of (a, b, c), alternating order")
	flag.IntVar(&o.warmup, "warmup", 4, "steps per run not measured")
	flag.IntVar(&o.batch, "batch", 8, "samples per step")
	flag.DurationVar(&o.model, "model", 60*time.Millisecond, "synthetic model step (CPU time on the trainer core)")
	flag.StringVar(&o.png, "png", "bench-offload-stall.png", "plot of per-step stall")
	flag.StringVar(&o.modelRuns, "model-runs", "thread", "where the synthetic model step runs: thread (a C thread the Go runtime does not know, as a training framework's own thread), cgo (a cgo call from a locked Go thread) or go (a Go loop on a locked thread, the harness before 2026-12-01); with cgo and go the Go runtime's handling of that thread costs CPU on other threads, counted as loading")
	flag.StringVar(&o.only, "only", "", "a quick look at one run kind (m, a, b or c): its rounds only, no BENCH line")
	flag.StringVar(&o.profile, "cpuprofile", "", "write a CPU profile of the trainer process over the measured steps of each run (b) to FILE.<round>")
	flag.Parse()
	if *burn {
		for x := 0; ; x++ {
		}
	}
	if o.modelRuns != "thread" && o.modelRuns != "cgo" && o.modelRuns != "go" {
		log.Fatalf("-model-runs %q: want thread, cgo or go", o.modelRuns)
	}
	o.media = os.Getenv("NEWTRICKS_XFORM_MEDIA")
	if err := run(o); err != nil {
		log.Fatal(err)
	}
}

const (
	trainerCPU = 0
	storageCPU = 1
)

func imageGraph() *xformv1.Graph {
	return &xformv1.Graph{Version: 1, Seed: 3, Nodes: []*xformv1.Node{
		xformgraph.NewNodeSpec("dec", "decode_image", "input", nil),
		xformgraph.NewNodeSpec("rrc", "random_resized_crop", "dec", map[string]any{"size": []any{160}}),
		xformgraph.NewNodeSpec("flip", "random_hflip", "rrc", nil),
		xformgraph.NewNodeSpec("norm", "normalize", "flip", map[string]any{"mean": []any{0.485, 0.456, 0.406}, "std": []any{0.229, 0.224, 0.225}}),
		xformgraph.NewNodeSpec("t", "to_tensor", "norm", map[string]any{"layout": "CHW", "dtype": "float16"}),
	}, Outputs: []string{"t"}}
}

func videoGraph() *xformv1.Graph {
	return &xformv1.Graph{Version: 1, Seed: 4, Nodes: []*xformv1.Node{
		xformgraph.NewNodeSpec("dec", "decode_video", "input", map[string]any{"mode": "random_segment", "num": 8, "stride": 2, "width": 112, "height": 112}),
		xformgraph.NewNodeSpec("t", "to_tensor", "dec", map[string]any{"layout": "TCHW", "dtype": "uint8"}),
	}, Outputs: []string{"t"}}
}

// bench holds the cluster and clients.
type bench struct {
	o     options
	model *modelThread
	c     *cluster.Cluster
	lay   extcluster.Layout
	su    string
	fs    *hdfs.Client
	ns    pb.NamespaceClient
	dir   reader.Directory
	nodes *extcluster.OffloadNodes
}

func run(o options) error {
	if runtime.NumCPU() < 2 {
		return fmt.Errorf("need 2 CPUs (trainer core and storage core), have %d", runtime.NumCPU())
	}
	a, err := extcluster.ArtifactsFromEnv()
	if err != nil {
		return err
	}
	u, err := user.Current()
	if err != nil {
		return err
	}
	m, err := datasets.LoadMedia(o.media)
	if err != nil {
		return err
	}
	clips, err := makeClips()
	if err != nil {
		return err
	}
	m.Videos = clips
	base, err := os.MkdirTemp("", "bench-offload-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(base)

	// The cluster starts from this process pinned to the storage core, so that the NameNode,
	// the DataNodes and the co-processes they start run there from their first thread (pinning
	// a running JVM thread by thread races with the threads it creates meanwhile); this
	// process moves to the trainer core once the cluster is up.
	if _, err := cluster.PinThreads(os.Getpid(), storageCPU); err != nil {
		return err
	}
	cfg, lay, err := extcluster.Setup(a, filepath.Join(base, "cluster"), extcluster.Options{Name: "bench-offload", DataNodes: 2,
		HDFSSite: map[string]string{"dfs.replication": "2"},
		DataNodeSite: func(int) map[string]string {
			return map[string]string{
				"newtricks.datanode.ext.offload.workers":         "1",
				"newtricks.datanode.ext.offload.lookahead":       "8",
				"newtricks.datanode.ext.offload.cpu.interval.ms": "250",
				// Runs a and b never shed (the machine may be busy with other work); run c sets
				// the default thresholds (0.8/0.7) with SetGovernor and loads the storage core.
				"newtricks.datanode.ext.offload.cpu.high": "1",
				"newtricks.datanode.ext.offload.cpu.low":  "1",
			}
		}})
	if err != nil {
		return err
	}
	ctx := context.Background()
	sctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	c, err := cluster.Start(sctx, cfg)
	cancel()
	if err != nil {
		return fmt.Errorf("start cluster: %w", err)
	}
	defer c.Stop()
	defer os.RemoveAll(lay.SocketDir)
	b := &bench{o: o, c: c, lay: lay, su: u.Username}
	if o.modelRuns == "thread" {
		if b.model, err = startModelThread(); err != nil {
			return err
		}
	}
	if _, err := b.pin(); err != nil {
		return err
	}
	if b.fs, err = c.Client(b.su); err != nil {
		return err
	}
	defer b.fs.Close()
	ns, nsConn, err := extcluster.NamespaceClient(lay)
	if err != nil {
		return err
	}
	defer nsConn.Close()
	b.ns = ns
	b.dir = reader.NamespaceDirectory{Client: pb.NewDataNodeDirectoryClient(nsConn), User: b.su}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	b.nodes, err = extcluster.DialOffload(wctx, lay, b.su)
	cancel()
	if err != nil {
		return err
	}
	defer b.nodes.Close()
	fmt.Printf("cluster: NameNode + %d DataNodes + datanode-ext pinned to CPU %d (1 transform worker each, nice 10); trainer pinned to CPU %d\n",
		len(lay.DataNodeAPI), storageCPU, trainerCPU)
	fmt.Printf("machine: 2 cores shared with other work (figures are noisy; the runs alternate so they share it alike); load average %s\n", loadAvg())

	// Datasets: JPEGs and clips (two sources, each with its own graph), and for the memory
	// comparison the same 160 images as 1 source ("one") or split in 8 sources ("part-N").
	if err := b.dataset(ctx, base, "jpeg", datasets.Media{Images: m.Images}, datasets.Layout{Shards: 3, PerShard: 40}); err != nil {
		return err
	}
	if err := b.dataset(ctx, base, "clip", datasets.Media{Images: m.Videos}, datasets.Layout{Shards: 1, PerShard: 40}); err != nil {
		return err
	}
	if err := b.dataset(ctx, base, "one", datasets.Media{Images: m.Images}, datasets.Layout{Shards: 8, PerShard: 20}); err != nil {
		return err
	}
	for i := 0; i < 8; i++ {
		if err := b.dataset(ctx, base, fmt.Sprintf("part-%d", i), datasets.Media{Images: m.Images}, datasets.Layout{Shards: 1, PerShard: 20}); err != nil {
			return err
		}
	}
	spec := &schedule.Spec{Name: "bench", Seed: 7, GlobalBatch: o.batch, WorldSize: 1, Sources: []schedule.Source{
		{Name: "jpeg", Dataset: "/bench/jpeg", Weight: 3, Graph: imageGraph()},
		{Name: "clip", Dataset: "/bench/clip", Weight: 1, Graph: videoGraph()},
	}}
	if err := spec.Validate(); err != nil {
		return err
	}
	fmt.Printf("datasets: /bench/jpeg 120 JPEGs (the xformgraph test photos, 500x500) in 3 tar shards, /bench/clip 40 H.264 clips (320x240, 2 s, ffmpeg CLI) in 1 shard; mixed 3:1\n")
	fmt.Printf("graphs: JPEG decode -> random_resized_crop 160 -> hflip -> normalize -> float16 CHW; clip random_segment 8 frames (stride 2) at 112x112 -> uint8 TCHW\n")
	kind := map[string]string{"thread": "on its own C thread", "cgo": "a cgo call", "go": "a Go loop"}[o.modelRuns]
	fmt.Printf("trainer: %v model step (CPU, %s), batch %d, reader prefetch 2, 1 local worker; %d measured steps per run after %d warm-up, %d rounds\n",
		o.model, kind, o.batch, o.steps, o.warmup, o.rounds)
	fmt.Printf("stall of a step = waiting in Next + the trainer-core CPU the loading used while the model step was ready; lost = wall time minus model CPU (stall + other processes on the trainer core); m = model only, no loading\n\n")

	modes := []string{"m", "a", "b", "c"}
	res := map[string][]runResult{}
	step := uint64(0)
	for r := 0; r < o.rounds; r++ {
		order := modes
		if r%2 == 1 {
			order = []string{"c", "b", "a", "m"}
		}
		for _, md := range order {
			if o.only != "" && md != o.only {
				continue
			}
			b.o.round = r
			rr, err := b.runMode(ctx, spec, md, step)
			if err != nil {
				return fmt.Errorf("round %d run %s: %w", r, md, err)
			}
			step += uint64(o.steps + o.warmup)
			res[md] = append(res[md], rr)
			fmt.Printf("round %d %s: %s\n", r, md, rr)
		}
	}
	fmt.Println()
	if o.only != "" {
		g := aggregateOf(res[o.only])
		fmt.Printf("only %s: stall P50 %s, P99 %s, mean %s ms; lost P99 %s, mean %s ms; wait in Next mean %s ms; loading CPU %s ms/step; %s steps/s (median (min, max) over rounds; no BENCH line)\n",
			o.only, g.p50, g.p99, g.stall, g.lp99, g.lmean, g.wmean, g.cpu, g.rate)
		return nil
	}
	agg := map[string]aggregate{}
	for _, md := range modes {
		agg[md] = aggregateOf(res[md])
	}
	names := map[string]string{"m": "(m) model only, no loading", "a": "(a) HDFS raw + local transform", "b": "(b) offload", "c": "(c) offload, storage loaded"}
	fmt.Printf("%-32s %-20s %-20s %-20s %-20s %-20s %-20s %-20s %s\n", "", "stall P50 ms", "stall P99 ms", "mean stall ms", "lost P99 ms", "mean lost ms", "mean Next wait ms", "loading CPU ms/step", "steps/s")
	for _, md := range modes {
		g := agg[md]
		fmt.Printf("%-32s %-20s %-20s %-20s %-20s %-20s %-20s %-20s %s   (samples: %s)\n", names[md], g.p50, g.p99, g.stall, g.lp99, g.lmean, g.wmean, g.cpu, g.rate, g.paths)
	}
	pa, pb_, pc, pm := agg["a"], agg["b"], agg["c"], agg["m"]
	p99Red := 1 - pb_.p99.med/pa.p99.med
	stallRed := 1 - pb_.stall.med/pa.stall.med
	cpuRed := 1 - pb_.cpu.med/pa.cpu.med
	penalty := pa.rate.med/pc.rate.med - 1
	fmt.Printf("\nratios (medians over rounds): stall P99 b/a %.3f, mean stall b/a %.3f, loading CPU b/a %.3f, steps/s b/a %.2f, c/a %.3f; model only %.2f steps/s (a %.0f%%, b %.0f%%, c %.0f%% of it)\n",
		pb_.p99.med/pa.p99.med, pb_.stall.med/pa.stall.med, pb_.cpu.med/pa.cpu.med, pb_.rate.med/pa.rate.med, pc.rate.med/pa.rate.med,
		pm.rate.med, 100*pa.rate.med/pm.rate.med, 100*pb_.rate.med/pm.rate.med, 100*pc.rate.med/pm.rate.med)
	fmt.Printf("lost time (wall minus model CPU, other processes on the trainer core included): P99 b/a %.3f, mean b/a %.3f; model only: P99 %.1f ms, mean %.1f ms\n",
		pb_.lp99.med/pa.lp99.med, pb_.lmean.med/pa.lmean.med, pm.lp99.med, pm.lmean.med)

	// Per-step stall plot of the last round.
	last := o.rounds - 1
	var ss []plot.Series
	for i, m := range []string{"a", "b", "c", "m"} {
		sr := plot.Series{Name: names[m], Color: plot.Palette[i]}
		for step, d := range res[m][last].stalls {
			sr.X, sr.Y = append(sr.X, float64(step)), append(sr.Y, stats.Ms(d))
		}
		ss = append(ss, sr)
	}
	chart := plot.Chart{Title: "per-step stall (wait in Next + loading CPU while the model was ready), last round (trainer core 0, storage core 1)",
		XLabel: "step", YUnit: " ms", Height: 420}
	if err := chart.WritePNG(o.png, ss); err != nil {
		return err
	}
	fmt.Printf("plot: %s\n", o.png)

	mem1, mem8, err := b.memory(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("reader heap after 20 steps (prefetch 1, after GC; median of 3): 1 source %s, 8 sources %s (same 160 images)\n", human(mem1), human(mem8))
	if err := b.readThroughput(ctx, base, spec); err != nil {
		return err
	}
	fmt.Printf("load average at the end: %s\n", loadAvg())
	fmt.Printf("BENCH offload p99_reduction=%.3f stall_reduction=%.3f trainer_cpu_reduction=%.3f fallback_penalty=%.3f mem_8_vs_1=%.3f\n",
		p99Red, stallRed, cpuRed, penalty, float64(mem8)/float64(mem1))
	return nil
}

// pin puts the NameNode, the DataNodes and everything they started (datanode-ext) on the
// storage core and every thread of this process on the trainer core, and returns how many
// threads it had to move (0 once everything is where it belongs: it runs before every run).
func (b *bench) pin() (int, error) {
	pids := []int{b.c.NameNodePID()}
	for _, dn := range b.c.DataNodes() {
		pids = append(pids, dn.PID)
	}
	moved := 0
	for _, p := range pids {
		n, err := cluster.PinTree(p, storageCPU)
		if err != nil {
			return moved, err
		}
		moved += n
	}
	n, err := cluster.PinThreads(os.Getpid(), trainerCPU)
	return moved + n, err
}

// makeClips encodes three 2 s 320x240 H.264 clips with the ffmpeg CLI.
func makeClips() ([]datasets.Item, error) {
	dir, err := os.MkdirTemp("", "bench-offload-clips-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var out []datasets.Item
	for i, src := range []string{"testsrc2", "mandelbrot", "testsrc"} {
		p := filepath.Join(dir, fmt.Sprintf("c%d.mp4", i))
		cmd := exec.Command("ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-f", "lavfi",
			"-i", src+"=size=320x240:rate=25", "-t", "2", "-c:v", "libx264", "-preset", "fast", "-g", "25", "-bf", "2", "-pix_fmt", "yuv420p", p)
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("ffmpeg: %v: %s", err, b)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, datasets.Item{Ext: "mp4", Data: data})
	}
	return out, nil
}

// dataset writes a dataset locally, uploads it to /bench/<name> and indexes it.
func (b *bench) dataset(ctx context.Context, base, name string, m datasets.Media, l datasets.Layout) error {
	_, _, err := datasets.Upload(ctx, b.fs, filepath.Join(base, name), "/bench/"+name, m, l)
	return err
}

type runResult struct {
	stalls  []time.Duration // per step: wait in Next + loading CPU while the model step was ready
	losts   []time.Duration // per step: wall time minus the model step's CPU time
	waits   []time.Duration // per step: time blocked in Next
	elapsed time.Duration
	cpu     float64 // trainer CPU seconds spent on loading
	paths   map[string]int
	steps   int
	ctxsw   int64 // context switches of the trainer process (all threads)
	gcs     uint32
}

func (r runResult) String() string {
	s, l := r.stalls, r.losts
	return fmt.Sprintf("stall P50 %v P99 %v mean %v, lost P99 %v mean %v, Next wait mean %v, loading CPU %.2f ms/step, %.2f steps/s, %.0f context switches/step, %d GCs, samples %v",
		stats.Pct(s, 50).Round(time.Microsecond*100), stats.Pct(s, 99).Round(time.Microsecond*100), stats.Mean(r.stalls).Round(time.Microsecond*100),
		stats.Pct(l, 99).Round(time.Microsecond*100), stats.Mean(r.losts).Round(time.Microsecond*100), stats.Mean(r.waits).Round(time.Microsecond*100),
		1000*r.cpu/float64(r.steps), float64(r.steps)/r.elapsed.Seconds(), float64(r.ctxsw)/float64(r.steps), r.gcs, r.paths)
}

// runMode runs one measured training loop.
func (b *bench) runMode(ctx context.Context, spec *schedule.Spec, mode string, start uint64) (runResult, error) {
	if n, err := b.pin(); err != nil {
		return runResult{}, err
	} else if n > 0 {
		fmt.Printf("(pinning: %d threads moved back to their core before run %s)\n", n, mode)
	}
	var burner *exec.Cmd
	if mode == "c" {
		self, err := os.Executable()
		if err != nil {
			return runResult{}, err
		}
		burner = exec.Command("taskset", "-c", fmt.Sprint(storageCPU), self, "-burn")
		if err := burner.Start(); err != nil {
			return runResult{}, err
		}
		if err := b.nodes.SetGovernor(ctx, 0.8, 0.7); err != nil {
			return runResult{}, err
		}
		defer func() {
			burner.Process.Kill()
			burner.Wait()
			b.nodes.SetGovernor(ctx, 1, 1)
			b.nodes.WaitShedding(ctx, false, 30*time.Second)
		}()
		if err := b.nodes.WaitShedding(ctx, true, 30*time.Second); err != nil {
			return runResult{}, err
		}
	}
	var r *reader.Reader
	if mode != "m" {
		store := &reader.HDFSStore{Client: b.fs}
		defer store.Close()
		cfg := reader.Config{User: b.su, Spec: spec, StartStep: start, Locator: reader.NamespaceLocator{Client: b.ns, User: b.su},
			Store: store, Prefetch: 2, LocalWorkers: 1, MaxWait: 10 * time.Second}
		if mode != "a" {
			cfg.Directory = b.dir
		}
		var err error
		if r, err = reader.Open(ctx, cfg); err != nil {
			return runResult{}, err
		}
		defer r.Close()
	}

	// The model runs on one thread (its own C thread, or this one locked), so its CPU time is
	// known exactly.
	if b.o.modelRuns != "thread" {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	res := runResult{paths: map[string]int{}, steps: b.o.steps}
	var cpu0, model float64
	var sw0 int64
	var t0 time.Time
	var ms0, ms1 runtime.MemStats
	for i := 0; i < b.o.warmup+b.o.steps; i++ {
		if i == b.o.warmup {
			if mode == "b" && b.o.profile != "" {
				f, err := os.Create(fmt.Sprintf("%s.%d", b.o.profile, b.o.round))
				if err != nil {
					return res, err
				}
				defer f.Close()
				runtime.SetCPUProfileRate(1000) // the loading work is a few ms per step: sample every ms
				if err := pprof.StartCPUProfile(f); err != nil {
					return res, err
				}
				defer pprof.StopCPUProfile()
			}
			cpu0, model, t0, sw0 = processCPU(), 0, time.Now(), contextSwitches()
			runtime.ReadMemStats(&ms0)
		}
		w0 := time.Now()
		st := &reader.Step{}
		if r != nil {
			var err error
			if st, err = r.Next(ctx); err != nil {
				return res, err
			}
		}
		wait := time.Since(w0)
		for _, s := range st.Samples {
			if s.Err != nil {
				return res, s.Err
			}
			if i >= b.o.warmup {
				res.paths[s.Path]++
			}
		}
		p0 := processCPU()
		m, err := b.modelStep()
		if err != nil {
			return res, err
		}
		// Every thread of the trainer is on one core: CPU the rest of the process used while
		// the model step ran was taken from the model.
		taken := max(0, processCPU()-p0-m)
		st.Release() // the model is done with the step's tensors: the reader may reuse their memory
		if i >= b.o.warmup {
			model += m
			res.waits = append(res.waits, wait)
			res.stalls = append(res.stalls, wait+time.Duration(taken*1e9))
			res.losts = append(res.losts, time.Since(w0)-time.Duration(m*1e9))
		}
	}
	res.elapsed = time.Since(t0)
	res.cpu = (processCPU() - cpu0) - model
	res.ctxsw = contextSwitches() - sw0
	runtime.ReadMemStats(&ms1)
	res.gcs = ms1.NumGC - ms0.NumGC
	return res, nil
}

// modelStep runs one synthetic model step where -model-runs says and returns its CPU seconds.
func (b *bench) modelStep() (float64, error) {
	switch b.o.modelRuns {
	case "thread":
		return b.model.step(b.o.model)
	case "cgo":
		t0 := threadCPU()
		modelStep(b.o.model)
		return threadCPU() - t0, nil
	default:
		t0 := threadCPU()
		modelStepGo(b.o.model)
		return threadCPU() - t0, nil
	}
}

// modelStepGo burns the calling thread's CPU for d in a Go loop: the harness before
// 2026-12-01 (-model-go). The Go scheduler preempts that locked goroutine every 10 ms and hands
// it between threads, and that CPU (about 2 ms per 60 ms step here, no reader running) was
// counted as loading CPU in every run.
func modelStepGo(d time.Duration) {
	end := threadCPU() + d.Seconds()
	x := 0
	for threadCPU() < end {
		for k := 0; k < 10000; k++ {
			x += k
		}
	}
	_ = x
}

// memory measures the reader's heap with one source and with eight of the same total size.
func (b *bench) memory(ctx context.Context) (int64, int64, error) {
	one := &schedule.Spec{Name: "mem1", Seed: 1, GlobalBatch: b.o.batch, WorldSize: 1,
		Sources: []schedule.Source{{Name: "one", Dataset: "/bench/one", Weight: 1, Graph: imageGraph()}}}
	eight := &schedule.Spec{Name: "mem8", Seed: 1, GlobalBatch: b.o.batch, WorldSize: 1}
	for i := 0; i < 8; i++ {
		eight.Sources = append(eight.Sources, schedule.Source{Name: fmt.Sprint("part", i), Dataset: fmt.Sprintf("/bench/part-%d", i), Weight: 1, Graph: imageGraph()})
	}
	measure := func(spec *schedule.Spec) (int64, error) {
		if err := spec.Validate(); err != nil {
			return 0, err
		}
		store := &reader.HDFSStore{Client: b.fs}
		defer store.Close()
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		r, err := reader.Open(ctx, reader.Config{User: b.su, Spec: spec, Locator: reader.NamespaceLocator{Client: b.ns, User: b.su},
			Store: store, Directory: b.dir, Prefetch: 1})
		if err != nil {
			return 0, err
		}
		defer r.Close()
		for i := 0; i < 20; i++ {
			if _, err := r.Next(ctx); err != nil {
				return 0, err
			}
		}
		// Let the prefetcher fill its one slot and block, so both readers hold the same steps.
		time.Sleep(time.Second)
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m1)
		return int64(m1.HeapAlloc) - int64(m0.HeapAlloc), nil
	}
	var a1, a8 []int64
	for i := 0; i < 3; i++ {
		x, err := measure(one)
		if err != nil {
			return 0, 0, err
		}
		y, err := measure(eight)
		if err != nil {
			return 0, 0, err
		}
		a1, a8 = append(a1, x), append(a8, y)
	}
	return stats.Median(a1), stats.Median(a8), nil
}

// readThroughput measures plain HDFS reads of a 64 MiB file from the DataNodes, idle and while
// an offload reader keeps their transform workers busy (item 5: block serving is not starved).
func (b *bench) readThroughput(ctx context.Context, base string, spec *schedule.Spec) error {
	data := make([]byte, 64<<20)
	for i := range data {
		data[i] = byte(i * 31)
	}
	if err := hdfsio.WriteFile(ctx, b.fs, "/bench/big", data); err != nil {
		return err
	}
	read := func() (float64, error) {
		f, err := b.fs.Open("/bench/big")
		if err != nil {
			return 0, err
		}
		defer f.Close()
		t := time.Now()
		n, err := io.Copy(io.Discard, f)
		if err != nil {
			return 0, err
		}
		return float64(n) / (1 << 20) / time.Since(t).Seconds(), nil
	}
	var idle, loaded []float64
	for round := 0; round < 3; round++ {
		x, err := read()
		if err != nil {
			return err
		}
		idle = append(idle, x)
		// Keep the DataNodes' workers busy: a reader asking far ahead and never consuming slowly.
		store := &reader.HDFSStore{Client: b.fs}
		r, err := reader.Open(ctx, reader.Config{User: b.su, Spec: spec, StartStep: 100000 + uint64(round)*1000, Locator: reader.NamespaceLocator{Client: b.ns, User: b.su},
			Store: store, Directory: b.dir, Prefetch: 4, MaxWait: 10 * time.Second})
		if err != nil {
			return err
		}
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := r.Next(ctx); err != nil {
					return
				}
			}
		}()
		time.Sleep(time.Second)
		y, err := read()
		close(stop)
		<-done
		r.Close()
		store.Close()
		if err != nil {
			return err
		}
		loaded = append(loaded, y)
	}
	fmt.Printf("HDFS read of a 64 MiB file (client on the trainer core): idle DataNodes %.0f MiB/s (min %.0f, max %.0f), with a full transform load %.0f MiB/s (min %.0f, max %.0f), ratio %.2f\n",
		stats.Median(idle), slices.Min(idle), slices.Max(idle), stats.Median(loaded), slices.Min(loaded), slices.Max(loaded), stats.Median(loaded)/stats.Median(idle))
	return nil
}

type stat struct{ med, min, max float64 }

func (s stat) String() string { return fmt.Sprintf("%.2f (%.2f, %.2f)", s.med, s.min, s.max) }

type aggregate struct {
	p50, p99, stall, lp99, lmean, wmean, cpu, rate stat
	paths                                          string
}

func aggregateOf(rs []runResult) aggregate {
	var p50, p99, st, lp99, lmean, wmean, cpu, rate []float64
	paths := map[string]int{}
	for _, r := range rs {
		s, l := r.stalls, r.losts
		p50 = append(p50, stats.Ms(stats.Pct(s, 50)))
		p99 = append(p99, stats.Ms(stats.Pct(s, 99)))
		st = append(st, stats.Ms(stats.Mean(r.stalls)))
		lp99 = append(lp99, stats.Ms(stats.Pct(l, 99)))
		lmean = append(lmean, stats.Ms(stats.Mean(r.losts)))
		wmean = append(wmean, stats.Ms(stats.Mean(r.waits)))
		cpu = append(cpu, 1000*r.cpu/float64(r.steps))
		rate = append(rate, float64(r.steps)/r.elapsed.Seconds())
		for k, v := range r.paths {
			paths[k] += v
		}
	}
	mk := func(x []float64) stat { m, lo, hi := stats.Range(x); return stat{m, lo, hi} }
	var ps []string
	for k, v := range paths {
		ps = append(ps, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(ps)
	return aggregate{p50: mk(p50), p99: mk(p99), stall: mk(st), lp99: mk(lp99), lmean: mk(lmean), wmean: mk(wmean), cpu: mk(cpu), rate: mk(rate), paths: strings.Join(ps, " ")}
}

func human(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// loadAvg is /proc/loadavg's 1, 5 and 15 minute load averages.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

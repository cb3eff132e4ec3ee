package main

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/newtricks/newtricks/harness/datasets"
	"github.com/newtricks/newtricks/harness/extcluster"
	xformv1 "github.com/newtricks/newtricks/proto/gen/xformv1"
	"github.com/newtricks/newtricks/reader"
	"github.com/newtricks/newtricks/schedule"
	"github.com/newtricks/newtricks/xformgraph"
	"github.com/newtricks/newtricks/xformgraph/frame"
)

// offload shows trick 3: a training loop reading transformed samples from the DataNodes, the
// fallback to local transforms while the storage side is loaded, and the return to offload.
func (d *demo) offload(ctx context.Context) error {
	me, err := user.Current()
	if err != nil {
		return err
	}
	fs, err := d.c.Client(me.Username)
	if err != nil {
		return err
	}
	defer fs.Close()
	m, err := datasets.LoadMedia(existingDir(os.Getenv("NEWTRICKS_XFORM_MEDIA")))
	if err != nil {
		return err
	}
	base, err := os.MkdirTemp("", "demo-offload-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(base)
	fmt.Fprintln(d.out, "== offload: samples transformed on the DataNodes, next to the data")
	for _, ds := range []struct {
		name  string
		media datasets.Media
		l     datasets.Layout
	}{
		// Every image sample is a JPEG with its label (cls), caption (txt) and metadata (json).
		{"img", datasets.Media{Images: m.Images}, datasets.Layout{Shards: 2, PerShard: 22, Captions: true}},
		{"vid", datasets.Media{Images: m.Videos}, datasets.Layout{Shards: 1, PerShard: 6}},
	} {
		remote := "/demo/offload/" + ds.name
		idx, sum, err := datasets.Upload(ctx, fs, filepath.Join(base, ds.name), remote, ds.media, ds.l)
		if err != nil {
			return err
		}
		fmt.Fprintf(d.out, "   newtricks dataset index %s: %d samples in %d files, index sha256 %x...\n", remote, len(idx.GetSamples()), len(idx.GetFiles()), sum[:6])
	}
	spec := &schedule.Spec{Name: "demo", Seed: 42, GlobalBatch: 8, WorldSize: 1, Sources: []schedule.Source{
		{Name: "img", Dataset: "/demo/offload/img", Weight: 3, Graph: demoImageGraph()},
		{Name: "vid", Dataset: "/demo/offload/vid", Weight: 1, Graph: demoVideoGraph()},
	}}
	if err := spec.Validate(); err != nil {
		return err
	}
	fmt.Fprintln(d.out, "   schedule: batch 8, images:clips 3:1; graphs: JPEG -> random_resized_crop 128 -> flip -> normalize -> float32,")
	fmt.Fprintln(d.out, "   clip -> 4 random consecutive frames at 96x96 -> uint8; every sample also brings its label and caption")
	store := &reader.HDFSStore{Client: fs}
	defer store.Close()
	// The reader needs only namenode-ext: it finds the DataNodes' datanode-ext in its directory.
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	nodes, err := extcluster.DialOffload(wctx, d.lay, me.Username)
	cancel()
	if err != nil {
		return err
	}
	defer nodes.Close()
	r, err := reader.Open(ctx, reader.Config{User: me.Username, Spec: spec, Locator: reader.NamespaceLocator{Client: d.ns, User: me.Username},
		Store: store, Directory: reader.NamespaceDirectory{Client: d.dir, User: me.Username}, Dial: extcluster.Dial,
		MaxWait: 10 * time.Second, Retry: time.Second})
	if err != nil {
		return err
	}
	defer r.Close()
	shedding := func() (int, float64) {
		n, other := 0, 0.0
		sts, _ := nodes.Status(ctx) // a node that does not answer (nil) counts as not shedding
		for _, st := range sts {
			if st.GetShedding() {
				n++
			}
			other = max(other, st.GetCpuOther())
		}
		return n, other
	}
	if n, other := shedding(); n > 0 {
		fmt.Fprintf(d.out, "   note: %d of %d DataNodes already shed before the demo loads anything (cpu_other up to %.2f: this machine is busy with other work), so samples come back raw\n", n, len(nodes.Clients), other)
	}
	var step int
	phase := func(name string, steps int) error {
		paths := map[string]int{}
		var wait time.Duration
		before := r.Stats()
		for i := 0; i < steps; i++ {
			t := time.Now()
			st, err := r.Next(ctx)
			if err != nil {
				return err
			}
			wait += time.Since(t)
			if step == 0 {
				d.showSamples(r, spec, st, 4)
			}
			for _, s := range st.Samples {
				if s.Err != nil {
					return s.Err
				}
				paths[s.Path]++
			}
			step++
			time.Sleep(20 * time.Millisecond) // the model step
		}
		after := r.Stats()
		n, other := shedding()
		fmt.Fprintf(d.out, "   %-34s steps %3d-%3d: %2d samples as tensors from the DataNodes, %2d raw (transformed here), %2d read from HDFS; wait %5.1f ms/step, local transform %4.0f ms; %d of %d nodes shedding (max cpu_other %.2f)\n",
			name, step-steps, step-1, paths["offload"], paths["raw"], paths["local"], float64(wait.Microseconds())/1000/float64(steps),
			float64((after.LocalTransform - before.LocalTransform).Milliseconds()), n, len(nodes.Clients), other)
		return nil
	}
	if err := phase("training, storage idle:", 15); err != nil {
		return err
	}
	// Load the machine from this process: for the DataNodes that is CPU used by others.
	var stop atomic.Bool
	for i := 0; i < runtime.NumCPU()+1; i++ {
		go func() {
			for x := 0; !stop.Load(); x++ {
			}
		}()
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if n, _ := shedding(); n == len(nodes.Clients) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	err = phase("storage CPU loaded above 80%:", 10)
	stop.Store(true)
	if err != nil {
		return err
	}
	deadline = time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if n, _ := shedding(); n == 0 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := phase("load gone, back to offload:", 15); err != nil {
		return err
	}
	st := r.Stats()
	fmt.Fprintf(d.out, "   reader totals: %d steps, offloaded fraction %.2f, %s from the DataNodes, %s from HDFS, %d node reconnects\n",
		st.Steps, st.OffloadedFraction(), humanBytes(st.BytesFromNodes), humanBytes(st.BytesFromHDFS), st.Reconnects)
	fmt.Fprintln(d.out, "   (figures of the trainer/storage split: make bench-offload; protocol: docs/offload.md)")
	return nil
}

// showSamples prints the first n samples of a step as a trainer sees them: key, label and
// caption (the sample's members, decoded), the tensor's shape, and where it was made.
func (d *demo) showSamples(r *reader.Reader, spec *schedule.Spec, st *reader.Step, n int) {
	fmt.Fprintf(d.out, "   step %d, first %d of its %d samples:\n", st.Step, min(n, len(st.Samples)), len(st.Samples))
	for _, s := range st.Samples[:min(n, len(st.Samples))] {
		label, caption := "-", "-"
		if b, ok := s.Member("cls"); ok {
			if v, err := reader.Decode("cls", b); err == nil {
				label = fmt.Sprint(v)
			}
		}
		if b, ok := s.Member("txt"); ok {
			if v, err := reader.Decode("txt", b); err == nil {
				caption = fmt.Sprintf("%q", v)
			}
		}
		shape := "-"
		if f, _, err := frame.Parse(s.Frames); err == nil {
			shape = fmt.Sprint(f.Shape)
		}
		fmt.Fprintf(d.out, "     %-3s %-14s label %-2s caption %-44s tensor %-14s %s\n",
			spec.Sources[s.Source].Name, s.Key, label, caption, shape, s.Path)
	}
}

func existingDir(p string) string {
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return p
	}
	return ""
}

func demoImageGraph() *xformv1.Graph {
	return &xformv1.Graph{Version: 1, Seed: 1, Nodes: []*xformv1.Node{
		xformgraph.NewNodeSpec("dec", "decode_image", "input", nil),
		xformgraph.NewNodeSpec("rrc", "random_resized_crop", "dec", map[string]any{"size": []any{128}}),
		xformgraph.NewNodeSpec("flip", "random_hflip", "rrc", nil),
		xformgraph.NewNodeSpec("norm", "normalize", "flip", map[string]any{"mean": []any{0.485, 0.456, 0.406}, "std": []any{0.229, 0.224, 0.225}}),
		xformgraph.NewNodeSpec("t", "to_tensor", "norm", map[string]any{"layout": "CHW", "dtype": "float32"}),
	}, Outputs: []string{"t"}}
}

func demoVideoGraph() *xformv1.Graph {
	return &xformv1.Graph{Version: 1, Seed: 2, Nodes: []*xformv1.Node{
		xformgraph.NewNodeSpec("dec", "decode_video", "input", map[string]any{"mode": "random_segment", "num": 4, "width": 96, "height": 96}),
		xformgraph.NewNodeSpec("t", "to_tensor", "dec", map[string]any{"layout": "TCHW", "dtype": "uint8"}),
	}, Outputs: []string{"t"}}
}

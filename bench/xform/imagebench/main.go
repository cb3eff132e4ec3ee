// Command imagebench times the bench-xform image pipeline in newtricks (JPEG ->
// random_resized_crop 224 -> random flip -> normalize -> CHW float32) and prints one
// "REP wall_ips=<x> cpu_ips=<y>" line per repetition, like the Python baselines.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"syscall"
	"time"

	"github.com/newtricks/newtricks/xformgraph"
)

const pipeline = `{
  "version": 1, "name": "bench-image", "seed": "1",
  "nodes": [
    {"id": "dec", "op": "decode_image", "input": "input"},
    {"id": "rrc", "op": "random_resized_crop", "input": "dec", "params": {"size": [224], "filter": "bilinear"}},
    {"id": "flip", "op": "random_hflip", "input": "rrc"},
    {"id": "norm", "op": "normalize", "input": "flip", "params": {"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}},
    {"id": "t", "op": "to_tensor", "input": "norm", "params": {"layout": "CHW", "dtype": "float32"}}
  ],
  "outputs": ["t"]
}`

const decodeGraph = `{"version": 1, "nodes": [
  {"id": "dec", "op": "decode_image", "input": "input"},
  {"id": "t", "op": "to_tensor", "input": "dec", "params": {"layout": "HWC", "dtype": "uint8"}}],
  "outputs": ["t"]}`

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		log.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func main() {
	file := flag.String("file", "", "JPEG input")
	n := flag.Int("n", 300, "images per repetition")
	reps := flag.Int("reps", 5, "repetitions")
	decodeOnly := flag.Bool("decode-only", false, "time decode_image -> uint8 HWC only (the floor under the pipeline)")
	flag.Parse()
	data, err := os.ReadFile(*file)
	if err != nil {
		log.Fatal(err)
	}
	js := pipeline
	if *decodeOnly {
		js = decodeGraph
	}
	spec, err := xformgraph.ParseJSON([]byte(js))
	if err != nil {
		log.Fatal(err)
	}
	g, err := xformgraph.Compile(spec, nil, xformgraph.Limits{})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	run := func(i int) {
		out, err := g.Run(ctx, xformgraph.Sample{Key: fmt.Sprint("img", i), Data: data})
		if err != nil {
			log.Fatal(err)
		}
		if !*decodeOnly && len(out.Values[0].Tensor.Data) != 3*224*224*4 {
			log.Fatal("bad output size")
		}
		// Done with the output (a DataNode has framed it by now): its memory serves the
		// next sample, as freed numpy arrays do for the Python baselines.
		out.Release()
	}
	for i := 0; i < 20; i++ { // warm-up: decoder pool, scratch buffers
		run(i)
	}
	for r := 0; r < *reps; r++ {
		w0, c0 := time.Now(), cpuTime()
		for i := 0; i < *n; i++ {
			run(r**n + i)
		}
		w, c := time.Since(w0), cpuTime()-c0
		fmt.Printf("REP wall_ips=%.1f cpu_ips=%.1f\n", float64(*n)/w.Seconds(), float64(*n)/c.Seconds())
	}
}

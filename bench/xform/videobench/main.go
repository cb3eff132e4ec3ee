// Command videobench measures newtricks' video path for bench/xform/video.sh: clips/s of a
// decode_video(uniform 8, 224x224) -> to_tensor(TCHW uint8) graph, and sequential decode
// frames/s. It prints one JSON object; video.sh compares it with the baselines.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/newtricks/newtricks/bench/internal/stats"
	"github.com/newtricks/newtricks/xformgraph"
	"github.com/newtricks/newtricks/xformgraph/video"
)

func main() {
	clip := flag.String("clip", "", "video file")
	runs := flag.Int("runs", 5, "timed runs; the median is reported")
	warmup := flag.Int("warmup", 1, "untimed clips (or decodes) before the timed runs")
	clips := flag.Int("clips", 2, "clips per run (clips mode)")
	size := flag.Int("size", 224, "output side")
	num := flag.Int("num", 8, "frames per clip")
	mode := flag.String("mode", "clips", "clips | clips-separate | decode")
	dump := flag.String("dump", "", "clips modes: write the last clip's TCHW uint8 tensor to this file")
	flag.Parse()
	if err := run(*clip, *mode, *runs, *clips, *size, *num, *warmup, *dump); err != nil {
		fmt.Fprintln(os.Stderr, "videobench:", err)
		os.Exit(1)
	}
}

// cpuTime is the process's user+system time: under load from other processes it measures
// the work done, where wall time also measures the wait.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func run(path, mode string, runs, clips, size, num, warmup int, dump string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	ctx := context.Background()
	var rates, cpuRates []float64
	out := map[string]any{"mode": mode, "runs": runs}
	switch mode {
	case "clips", "clips-separate":
		js := fmt.Sprintf(`{"version": 1, "seed": "1", "nodes": [
		  {"id": "dec", "op": "decode_video", "input": "input", "params": {"mode": "uniform", "num": %d, "width": %d, "height": %d}},
		  {"id": "t", "op": "to_tensor", "input": "dec", "params": {"layout": "TCHW", "dtype": "uint8"}}], "outputs": ["t"]}`, num, size, size)
		if mode == "clips-separate" {
			// Sampling in decode_video, resize as its own (pure Go) op.
			js = fmt.Sprintf(`{"version": 1, "seed": "1", "nodes": [
			  {"id": "dec", "op": "decode_video", "input": "input", "params": {"mode": "uniform", "num": %d}},
			  {"id": "r", "op": "resize", "input": "dec", "params": {"size": [%d, %d]}},
			  {"id": "t", "op": "to_tensor", "input": "r", "params": {"layout": "TCHW", "dtype": "uint8"}}], "outputs": ["t"]}`, num, size, size)
		}
		spec, err := xformgraph.ParseJSON([]byte(js))
		if err != nil {
			return err
		}
		g, err := xformgraph.Compile(spec, nil, xformgraph.Limits{})
		if err != nil {
			return err
		}
		var shape []int
		var last []byte
		for w := 0; w < warmup; w++ {
			if _, err := g.Run(ctx, xformgraph.Sample{Key: path, Data: data}); err != nil {
				return err
			}
		}
		for r := 0; r < runs; r++ {
			start, cpu0 := time.Now(), cpuTime()
			for c := 0; c < clips; c++ {
				o, err := g.Run(ctx, xformgraph.Sample{Key: path, Data: data})
				if err != nil {
					return err
				}
				shape = o.Values[0].Tensor.Shape
				last = o.Values[0].Tensor.Data
			}
			rates = append(rates, float64(clips)/time.Since(start).Seconds())
			cpuRates = append(cpuRates, float64(clips)/(cpuTime()-cpu0).Seconds())
		}
		out["shape"] = shape
		out["clips_per_s"] = stats.Median(rates)
		if dump != "" {
			if err := os.WriteFile(dump, last, 0o644); err != nil {
				return err
			}
		}
	case "decode":
		for w := 0; w < warmup; w++ {
			rd, err := video.OpenBytes(ctx, path, data, video.Options{Threads: 1})
			if err != nil {
				return err
			}
			_, err = rd.DecodeAll(ctx, nil)
			rd.Close()
			if err != nil {
				return err
			}
		}
		for r := 0; r < runs; r++ {
			start, cpu0 := time.Now(), cpuTime()
			rd, err := video.OpenBytes(ctx, path, data, video.Options{Threads: 1})
			if err != nil {
				return err
			}
			n, err := rd.DecodeAll(ctx, nil)
			rd.Close()
			if err != nil {
				return err
			}
			rates = append(rates, float64(n)/time.Since(start).Seconds())
			cpuRates = append(cpuRates, float64(n)/(cpuTime()-cpu0).Seconds())
			out["frames"] = n
		}
		out["fps"] = stats.Median(rates)
	default:
		return fmt.Errorf("unknown mode %q", mode)
	}
	out["samples"] = rates
	out["cpu_rate"] = stats.Median(cpuRates)
	return json.NewEncoder(os.Stdout).Encode(out)
}

package tokenize

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user+system CPU time (the benchmark is the only work in it), so
// that figures hold on a machine shared with other jobs.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkEncode encodes the reference corpus (a few MB of generated multilingual text,
// testdata/reference.py) with each reference tokenizer, one document at a time on one
// goroutine; bytes/s are of UTF-8 text, and tokens/s is reported too, both per wall second
// and per CPU second of the process (cpu-MB/s, cpu-tokens/s). bench/tokenize/run.sh runs it
// next to tokenizers on the same files, one thread each.
func BenchmarkEncode(b *testing.B) {
	dir := reference(b)
	docs := readDocsTB(b, dir)
	var size int64
	for _, d := range docs {
		size += int64(len(d))
	}
	for _, name := range []string{"gpt2", "template", "fallback", "suffix"} {
		js, err := os.ReadFile(filepath.Join(dir, name+".json"))
		if err != nil {
			b.Fatal(err)
		}
		tk, err := Load(js)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(size)
			tokens := 0
			c0 := cpuTime()
			for i := 0; i < b.N; i++ {
				tokens = 0
				for _, d := range docs {
					e, err := tk.Encode(d, Options{AddSpecialTokens: true})
					if err != nil {
						b.Fatal(err)
					}
					tokens += len(e.IDs)
				}
			}
			cpu := (cpuTime() - c0).Seconds()
			b.ReportMetric(float64(tokens)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
			b.ReportMetric(float64(tokens)*float64(b.N)/cpu, "cpu-tokens/s")
			b.ReportMetric(float64(size)*float64(b.N)/cpu/1e6, "cpu-MB/s")
		})
	}
}

package tokenize

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkEncode encodes the reference corpus (a few MB of generated multilingual text,
// testdata/reference.py) with each reference tokenizer, one document at a time on one
// goroutine; bytes/s are of UTF-8 text, and tokens/s is reported too. bench/tokenize/run.sh
// runs it next to tokenizers on the same files, one thread each.
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
			b.ReportMetric(float64(tokens)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

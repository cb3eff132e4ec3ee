// Command refrun runs a transform graph over sample files in a plain Go process, exactly as a
// DataNode would, and prints one JSON line per (sample, epoch): the SHA-256 and length of the
// output frames, or the error. The Python package's tests compare libnewtricks's output
// (the same code through the C API) with these lines.
//
//	refrun -graph g.json -epochs 0,1,2 FILE...     (the sample key is the file's base name)
//	refrun -golden                                 (the golden cases, one JSON line each)
//
// -golden lists package golden's cases (id, input file name under
// xformgraph/golden/testdata/inputs, key, epoch, graph spec with its seed, digest) so that
// another language can check its own outputs against the committed digests.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/newtricks/newtricks/xformgraph"
	"github.com/newtricks/newtricks/xformgraph/golden"
)

type goldenLine struct {
	ID     string          `json:"id"`
	Sample string          `json:"sample"`
	Key    string          `json:"key"`
	Epoch  uint64          `json:"epoch"`
	Graph  json.RawMessage `json:"graph"`
	Digest string          `json:"digest"`
	Domain string          `json:"recorded_domain"`
}

func listGolden() error {
	enc := json.NewEncoder(os.Stdout)
	for _, c := range golden.Cases() {
		l := goldenLine{ID: c.ID, Sample: c.Sample, Key: c.Key, Epoch: c.Epoch, Graph: c.GraphJSON(), Digest: c.Digest,
			Domain: golden.RecordedDomain()}
		if err := enc.Encode(l); err != nil {
			return err
		}
	}
	return nil
}

type line struct {
	Key    string `json:"key"`
	Epoch  uint64 `json:"epoch"`
	SHA256 string `json:"sha256,omitempty"`
	Len    int    `json:"len,omitempty"`
	Error  string `json:"error,omitempty"`
}

func main() {
	graph := flag.String("graph", "", "graph spec file (JSON form)")
	epochs := flag.String("epochs", "0", "comma-separated epochs")
	goldens := flag.Bool("golden", false, "list the golden cases instead")
	flag.Parse()
	if *goldens {
		if err := listGolden(); err != nil {
			fmt.Fprintln(os.Stderr, "refrun:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*graph, *epochs, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "refrun:", err)
		os.Exit(1)
	}
}

func run(graphPath, epochList string, files []string) error {
	spec, err := os.ReadFile(graphPath)
	if err != nil {
		return err
	}
	gs, err := xformgraph.ParseJSON(spec)
	if err != nil {
		return err
	}
	g, err := xformgraph.Compile(gs, nil, xformgraph.Limits{})
	if err != nil {
		return err
	}
	var eps []uint64
	for _, s := range strings.Split(epochList, ",") {
		e, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return fmt.Errorf("epochs: %w", err)
		}
		eps = append(eps, e)
	}
	enc := json.NewEncoder(os.Stdout)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		key := filepath.Base(f)
		for _, e := range eps {
			l := line{Key: key, Epoch: e}
			out, err := g.Run(context.Background(), xformgraph.Sample{Key: key, Epoch: e, Data: data})
			var b []byte
			if err == nil {
				b, err = out.AppendFrames(nil)
			}
			if err != nil {
				l.Error = err.Error()
			} else {
				sum := sha256.Sum256(b)
				l.SHA256, l.Len = hex.EncodeToString(sum[:]), len(b)
			}
			if err := enc.Encode(l); err != nil {
				return err
			}
		}
	}
	return nil
}

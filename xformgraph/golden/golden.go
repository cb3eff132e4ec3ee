// Package golden holds committed SHA-256 digests of xformgraph outputs for a fixed set of
// (sample, graph, seed, epoch) cases over committed test media, and the functions that check
// output bytes against them. They pin xformgraph's promise that one sample gives the same
// bytes in every process and on every host of one determinism domain (xformgraph.Domain):
// the tests of this package check them in-process, in a process whose FFmpeg may use no SIMD
// at all, and in test binaries built for every GOAMD64 level; the offload tests check the
// bytes a DataNode sends and the bytes the reader computes itself against the same digests.
//
// A case's inputs are in testdata/inputs (embedded: the package needs no files at run time).
// Run a case with its Key as the sample key, its Epoch, and its Graph (whose seed is the
// case's Seed); Check takes the output frames (xformgraph.Output.AppendFrames, or the
// frames as received) and compares their digest.
//
// The digest covers every frame's kind, dtype, layout, shape and payload, not the domain
// string in the frame header: the bytes, not who made them. Digests change only when
// xformgraph.OutputVersion is bumped; then regenerate them with
//
//	go test ./xformgraph/golden -run '^TestGolden$' -update
//
// and commit testdata/golden.txt with the change that bumped the version.
package golden

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	xformv1 "github.com/newtricks/newtricks/proto/gen/xformv1"
	"github.com/newtricks/newtricks/xformgraph"
	"github.com/newtricks/newtricks/xformgraph/frame"
)

//go:embed testdata/inputs testdata/golden.txt
var files embed.FS

// ErrMismatch is wrapped when output bytes differ from a case's golden digest.
var ErrMismatch = errors.New("golden: output differs from the golden digest")

// ErrUnknownCase is wrapped when a case id is not in Cases.
var ErrUnknownCase = errors.New("golden: unknown case")

// Case is one golden case.
type Case struct {
	// ID is "<graph>/<sample>/s<seed>/e<epoch>", unique.
	ID string
	// GraphName names one of the graphs in graphs.go; Sample is the input file name in
	// testdata/inputs, and also the sample key (Key).
	GraphName, Sample string
	// Key is the sample key to run with (it seeds the random ops); equal to Sample.
	Key   string
	Seed  uint64
	Epoch uint64
	// Digest is the hex SHA-256 of the output (see Digest); empty only while regenerating.
	Digest string
}

// Input returns the case's sample bytes.
func (c Case) Input() []byte {
	b, err := files.ReadFile("testdata/inputs/" + c.Sample)
	if err != nil {
		panic("golden: input " + c.Sample + " not embedded: " + err.Error())
	}
	return b
}

// GraphJSON is the case's graph spec in its JSON form, with the case's seed.
func (c Case) GraphJSON() []byte {
	return []byte(strings.Replace(graphs[c.GraphName], `"seed":"SEED"`, `"seed":"`+strconv.FormatUint(c.Seed, 10)+`"`, 1))
}

// Graph is the case's graph spec (proto form), with the case's seed.
func (c Case) Graph() *xformv1.Graph {
	g, err := xformgraph.ParseJSON(c.GraphJSON())
	if err != nil {
		panic("golden: graph " + c.GraphName + ": " + err.Error())
	}
	return g
}

// Run runs the case in this process and returns the output frames: what a reader that
// transforms the raw sample itself gets.
func (c Case) Run(ctx context.Context) ([]byte, error) {
	g, err := xformgraph.Compile(c.Graph(), nil, xformgraph.Limits{})
	if err != nil {
		return nil, err
	}
	out, err := g.Run(ctx, xformgraph.Sample{Key: c.Key, Epoch: c.Epoch, Data: c.Input()})
	if err != nil {
		return nil, err
	}
	return out.AppendFrames(nil)
}

// Digest is the hex SHA-256 of the frames in out with their domain fields cleared: each
// frame re-encoded as frame.AppendTo writes it with an empty Domain, concatenated. out must
// hold whole frames and nothing else.
func Digest(out []byte) (digest string, domains []string, err error) {
	h := sha256.New()
	rest := out
	var buf []byte
	for n := 0; len(rest) > 0; n++ {
		var f *frame.Frame
		f, rest, err = frame.Parse(rest)
		if err != nil {
			return "", nil, fmt.Errorf("golden: frame %d: %w", n, err)
		}
		domains = append(domains, f.Domain)
		f.Domain = ""
		if buf, err = f.AppendTo(buf[:0]); err != nil {
			return "", nil, err
		}
		h.Write(buf)
	}
	if len(domains) == 0 {
		return "", nil, fmt.Errorf("golden: no frames: %w", frame.ErrFormat)
	}
	return hex.EncodeToString(h.Sum(nil)), domains, nil
}

// Check compares out, the output frames of case id, with its golden digest. A mismatch
// wraps ErrMismatch and names the case, both digests, the domain the goldens were made in
// and the domain(s) written in out's frames.
func Check(id string, out []byte) error {
	c, ok := byID()[id]
	if !ok {
		return fmt.Errorf("%w %q", ErrUnknownCase, id)
	}
	got, doms, err := Digest(out)
	if err != nil {
		return fmt.Errorf("golden: case %s: %w", id, err)
	}
	if got != c.Digest {
		return fmt.Errorf("%w: case %s: sha256 %s, golden %s (goldens made in domain %q; output frames from %q; this process %q)",
			ErrMismatch, id, got, c.Digest, recordedDomain(), strings.Join(uniq(doms), " | "), xformgraph.Domain().String())
	}
	return nil
}

// Cases returns every golden case in a fixed order (a fresh copy).
func Cases() []Case {
	cs := load()
	return append([]Case(nil), cs.list...)
}

// Lookup returns the case with this id.
func Lookup(id string) (Case, bool) {
	c, ok := byID()[id]
	return c, ok
}

// RecordedDomain is the determinism domain the committed digests were computed in.
func RecordedDomain() string { return recordedDomain() }

func recordedDomain() string { return load().domain }

func uniq(s []string) []string {
	m := map[string]bool{}
	var out []string
	for _, v := range s {
		if !m[v] {
			m[v] = true
			out = append(out, v)
		}
	}
	return out
}

type caseSet struct {
	list   []Case
	byID   map[string]Case
	domain string
}

var load = sync.OnceValue(func() *caseSet {
	cs := &caseSet{byID: map[string]Case{}}
	digests, domain, err := parseGolden()
	if err != nil {
		panic(err)
	}
	cs.domain = domain
	for _, c := range caseList() {
		c.Digest = digests[c.ID]
		cs.list = append(cs.list, c)
		cs.byID[c.ID] = c
	}
	return cs
})

func byID() map[string]Case { return load().byID }

// parseGolden reads testdata/golden.txt: "# domain: <domain>" then "<id> <sha256>" lines.
func parseGolden() (map[string]string, string, error) {
	b, err := files.ReadFile("testdata/golden.txt")
	if err != nil {
		return nil, "", err
	}
	return ParseGoldenFile(b)
}

// ParseGoldenFile parses the golden file format (exported for the regenerating test).
func ParseGoldenFile(b []byte) (digests map[string]string, domain string, err error) {
	digests = map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for ln := 1; sc.Scan(); ln++ {
		line := strings.TrimSpace(sc.Text())
		if d, ok := strings.CutPrefix(line, "# domain: "); ok {
			domain = d
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, sum, ok := strings.Cut(line, " ")
		if !ok || len(sum) != 64 {
			return nil, "", fmt.Errorf("golden.txt line %d: %q", ln, line)
		}
		digests[id] = sum
	}
	return digests, domain, sc.Err()
}

// FormatGoldenFile renders digests (case id -> hex) in the golden file format.
func FormatGoldenFile(domain string, digests map[string]string) []byte {
	var b bytes.Buffer
	b.WriteString("# Golden SHA-256 digests of xformgraph outputs (package xformgraph/golden).\n")
	b.WriteString("# Regenerate only with an xformgraph.OutputVersion bump: go test ./xformgraph/golden -run '^TestGolden$' -update\n")
	fmt.Fprintf(&b, "# domain: %s\n", domain)
	ids := make([]string, 0, len(digests))
	for id := range digests {
		ids = append(ids, id)
	}
	order := map[string]int{}
	for i, c := range caseList() {
		order[c.ID] = i
	}
	sort.Slice(ids, func(i, j int) bool { return order[ids[i]] < order[ids[j]] })
	for _, id := range ids {
		fmt.Fprintf(&b, "%s %s\n", id, digests[id])
	}
	return b.Bytes()
}

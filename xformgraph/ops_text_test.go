package xformgraph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	xformv1 "github.com/newtricks/newtricks/proto/gen/xformv1"
	"github.com/newtricks/newtricks/xformgraph/frame"
	"github.com/newtricks/newtricks/xformgraph/internal/testreq"
)

// tinyTokenizer is a byte-level BPE tokenizer.json small enough to write by hand: "ab a"
// gives [ab, Ġ, a] = [2, 3, 0].
const tinyTokenizer = `{"version": "1.0", "truncation": null, "padding": null,
  "added_tokens": [{"id": 4, "content": "<pad>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
                   {"id": 5, "content": "<eos>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}],
  "normalizer": null, "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
  "post_processor": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true},
  "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
  "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null, "end_of_word_suffix": null,
            "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
            "vocab": {"a": 0, "b": 1, "ab": 2, "Ġ": 3}, "merges": [["a", "b"]]}}`

func tokenizeGraph(t testing.TB, params map[string]any, outputs ...string) *xformv1.Graph {
	t.Helper()
	p := map[string]any{}
	for k, v := range params {
		p[k] = v
	}
	if _, ok := p["tokenizer"]; !ok {
		p["tokenizer"] = tinyTokenizer
	}
	nodes := []*xformv1.Node{
		NewNodeSpec("tok", "tokenize", InputID, p),
		NewNodeSpec("ids", "token_ids", "tok", map[string]any{"dtype": "int32"}),
		NewNodeSpec("ids64", "token_ids", "tok", map[string]any{"dtype": "int64"}),
		NewNodeSpec("mask", "attention_mask", "tok", nil),
		NewNodeSpec("mask8", "attention_mask", "tok", map[string]any{"dtype": "uint8"}),
	}
	if len(outputs) == 0 {
		outputs = []string{"ids", "mask"}
	}
	return &xformv1.Graph{Version: 1, Nodes: nodes, Outputs: outputs}
}

func runText(t *testing.T, g *Graph, text string) (*Output, error) {
	t.Helper()
	return g.Run(context.Background(), Sample{Key: "k", Data: []byte(text)})
}

func ints(tt *Tensor) []int64 {
	out := make([]int64, tt.Elems())
	for i := range out {
		out[i] = tt.Int64At(i)
	}
	return out
}

func TestTokenizeOpTiny(t *testing.T) {
	g, err := Compile(tokenizeGraph(t, map[string]any{"max_length": 6.0, "truncation": "right", "padding": "max_length", "pad_id": 4.0},
		"tok", "ids", "ids64", "mask", "mask8"), nil, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if n := g.Nodes[g.index["ids"]].Out; n.Bytes() != 24 || n.Layout != LayoutL {
		t.Errorf("static ids: %+v (%d bytes)", n, n.Bytes())
	}
	out, err := runText(t, g, "ab a")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"ids": "[2 3 0 4 4 4]", "ids64": "[2 3 0 4 4 4]", "mask": "[1 1 1 0 0 0]", "mask8": "[1 1 1 0 0 0]"}
	dts := map[string]DType{"ids": DTypeInt32, "ids64": DTypeInt64, "mask": DTypeInt32, "mask8": DTypeUint8}
	for i, name := range out.Names {
		v := out.Values[i]
		f, err := ToFrame(v)
		if err != nil {
			t.Fatal(err)
		}
		b, err := f.AppendTo(nil)
		if err != nil {
			t.Fatal(err)
		}
		back, _, err := frame.Parse(b)
		if err != nil || back.Layout != uint8(LayoutL) || fmt.Sprint(back.Shape) != "[6]" {
			t.Fatalf("%s: frame %+v %v", name, back, err)
		}
		if name == "tok" {
			if back.DType != uint8(DTypeInt32) {
				t.Errorf("tokens frame dtype %d", back.DType)
			}
			continue
		}
		if got := fmt.Sprint(ints(v.Tensor)); got != want[name] || v.Tensor.DType != dts[name] {
			t.Errorf("%s: %s %v, want %s %v", name, got, v.Tensor.DType, want[name], dts[name])
		}
	}
	// The parsed tokenizer is shared by graphs compiled again.
	g2, err := Compile(tokenizeGraph(t, map[string]any{"max_length": 6.0, "truncation": "right", "padding": "max_length", "pad_id": 4.0}), nil, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := g.Nodes[0].Prepared.(*tokenizeState).tk, g2.Nodes[0].Prepared.(*tokenizeState).tk; a != b {
		t.Error("tokenizer parsed twice")
	}
}

// TestTokenizeCompileErrors: parameters and limits are checked at Compile.
func TestTokenizeCompileErrors(t *testing.T) {
	for _, c := range []struct {
		params map[string]any
		lim    Limits
		is     error
		want   string
	}{
		{map[string]any{"max_length": float64(MaxSeqLen + 1)}, Limits{}, ErrBadParam, "out of range"},
		{map[string]any{"max_length": float64(MaxSeqLen), "truncation": "right", "padding": "max_length", "pad_id": 4.0}, Limits{MaxOutputBytes: 1 << 20}, ErrLimit, "limit"},
		{map[string]any{"max_tokens": float64(MaxMaxTokens)}, Limits{}, ErrLimit, "limit"},
		{map[string]any{}, Limits{MaxOutputBytes: 1 << 20}, ErrLimit, "limit"}, // max_tokens' 1M ids do not fit 1 MiB
		{map[string]any{"truncation": "right"}, Limits{}, ErrBadParam, "needs max_length"},
		{map[string]any{"padding": "max_length", "max_length": 8.0}, Limits{}, ErrBadParam, "pad_id"},
		{map[string]any{"input": "lines"}, Limits{}, ErrBadParam, "rows of equal length"},
		{map[string]any{"pack": true}, Limits{}, ErrBadParam, "needs max_length"},
		{map[string]any{"pack": true, "max_length": 8.0, "truncation": "left"}, Limits{}, ErrBadParam, "truncation must be none"},
		{map[string]any{"pack": true, "max_length": 8.0, "sep_token": "<nope>"}, Limits{}, ErrBadParam, "sep_token"},
		{map[string]any{"sep_token": "<eos>"}, Limits{}, ErrBadParam, "for pack"},
		{map[string]any{"tokenizer_sha256": "00"}, Limits{}, ErrBadParam, "SHA-256"},
		{map[string]any{"tokenizer": strings.Replace(tinyTokenizer, `"dropout": null`, `"dropout": 0.5`, 1)}, Limits{}, ErrBadParam, "dropout"},
		{map[string]any{"tokenizer": strings.Replace(tinyTokenizer, `"type": "BPE"`, `"type": "Unigram"`, 1)}, Limits{}, ErrBadParam, "Unigram"},
		{map[string]any{"tokenizer": tinyTokenizer + strings.Repeat(" ", 16<<20)}, Limits{}, ErrLimit, "limit"},
	} {
		_, err := Compile(tokenizeGraph(t, c.params, "ids64", "mask"), nil, c.lim)
		if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.want) {
			p := fmt.Sprint(c.params)
			t.Errorf("%.100s: %v, want %v containing %q", p, err, c.is, c.want)
		}
	}
	// normalize and to_tensor refuse token ids.
	for _, op := range []string{"normalize", "to_tensor"} {
		spec := tokenizeGraph(t, map[string]any{})
		params := map[string]any{"mean": []any{0.5}, "std": []any{0.5}}
		if op == "to_tensor" {
			params = nil
		}
		spec.Nodes = append(spec.Nodes, NewNodeSpec("x", op, "ids", params))
		spec.Outputs = []string{"x"}
		if _, err := Compile(spec, nil, Limits{}); !errors.Is(err, ErrTypeMismatch) {
			t.Errorf("%s of token ids: %v", op, err)
		}
	}
}

// TestTokenizeRunErrors: what a hostile or broken sample gets.
func TestTokenizeRunErrors(t *testing.T) {
	compile := func(p map[string]any) *Graph {
		g, err := Compile(tokenizeGraph(t, p), nil, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	jsonl := map[string]any{"input": "jsonl", "max_length": 4.0, "truncation": "right", "padding": "max_length", "pad_id": 4.0}
	for _, c := range []struct {
		g    *Graph
		in   string
		is   error
		want string
	}{
		{compile(nil), "a\xffb", ErrDecode, "not UTF-8 (at byte 1)"},
		{compile(nil), "", ErrDecode, "no tokens"},
		{compile(map[string]any{"max_text_bytes": 3.0}), "abab", ErrLimit, "max_text_bytes"},
		{compile(map[string]any{"max_tokens": 3.0}), "ab ab ab ab", ErrLimit, "max_tokens"},
		{compile(jsonl), `{"text": "ab"}` + "\n" + `{"txt": "ab"}`, ErrDecode, `line 2: no field "text"`},
		{compile(jsonl), `{"text": 7}`, ErrDecode, "not a string"},
		{compile(jsonl), `{"text": "a\ud800b"}`, ErrDecode, "unpaired surrogate"},
		{compile(jsonl), `{"text": "a\udc00"}`, ErrDecode, "unpaired surrogate"},
		{compile(jsonl), `["ab"]`, ErrDecode, "not a JSON object"},
		{compile(jsonl), "\n \n", ErrDecode, "no documents"},
		{compile(map[string]any{"pack": true, "max_length": 8.0}), "ab a", ErrDecode, "do not fill one row"},
		{compile(map[string]any{"pack": true, "max_length": 2.0, "max_tokens": 5.0, "input": "lines"}), "ab a\nab a\nab a", ErrLimit, "max_tokens"},
	} {
		_, err := runText(t, c.g, c.in)
		if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %v containing %q", c.in, err, c.is, c.want)
		}
	}
	// A pair of surrogate escapes is one character; an escaped backslash before u is not an
	// escape.
	out, err := runText(t, compile(jsonl), `{"text": "ab\ud83d\ude00"}`+"\r\n"+`{"text": "\\ud800"}`)
	if err != nil {
		t.Fatal(err)
	}
	if s := out.Values[0].Tensor.Shape; fmt.Sprint(s) != "[2 4]" {
		t.Errorf("shape %v", s)
	}
}

// TestTokenizeOpAgainstTokenizers runs the op on captions, lines and JSON lines samples,
// with truncation, padding, rows per document and packing, and compares with `tokenizers`
// (xformgraph/testdata/tokenize_ref.py, which states every case both as op parameters and
// as tokenizers settings).
func TestTokenizeOpAgainstTokenizers(t *testing.T) {
	py := os.Getenv("NEWTRICKS_PYTHON")
	if py == "" {
		testreq.Missing(t, "NEWTRICKS_PYTHON is not set (make xform-pyenv builds a venv with tokenizers)")
	}
	version, err := exec.Command(py, "-c", "import tokenizers; print(tokenizers.__version__)").CombinedOutput()
	if err != nil {
		testreq.Missing(t, "%s cannot import tokenizers (make xform-pyenv): %v\n%s", py, err, version)
	}
	// The reference depends only on the scripts and the tokenizers release: cached.
	dir := testreq.Cached(t, "tokenize-op-reference", []string{"testdata/tokenize_ref.py", "tokenize/testdata/reference.py"},
		"tokenizers "+string(version), func(dir string) error {
			cmd := exec.Command(py, "testdata/tokenize_ref.py", dir)
			cmd.Env = append(os.Environ(), "TOKENIZERS_PARALLELISM=false", "RAYON_NUM_THREADS=1")
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("tokenize_ref.py: %v\n%s", err, out)
			}
			return nil
		})
	b, err := os.ReadFile(filepath.Join(dir, "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name, Tokenizer, Sample string
		Params                  map[string]any
		IDs                     []int64
		Mask                    []int64
		Shape                   []int
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	toks := map[string]string{}
	ids := 0
	for _, c := range cases {
		if toks[c.Tokenizer] == "" {
			js, err := os.ReadFile(filepath.Join(dir, c.Tokenizer+".json"))
			if err != nil {
				t.Fatal(err)
			}
			toks[c.Tokenizer] = string(js)
		}
		sample, err := os.ReadFile(filepath.Join(dir, "samples", c.Sample))
		if err != nil {
			t.Fatal(err)
		}
		p := map[string]any{"tokenizer": toks[c.Tokenizer]}
		for k, v := range c.Params {
			p[k] = v
		}
		g, err := Compile(tokenizeGraph(t, p, "ids64", "mask"), nil, Limits{})
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		out, err := g.Run(context.Background(), Sample{Key: c.Name, Data: sample})
		if len(c.IDs) == 0 {
			if !errors.Is(err, ErrDecode) {
				t.Errorf("%s: tokenizers gives no ids; the op: %v, want ErrDecode", c.Name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		gotIDs, gotMask := out.Values[0].Tensor, out.Values[1].Tensor
		if fmt.Sprint(gotIDs.Shape) != fmt.Sprint(c.Shape) || fmt.Sprint(ints(gotIDs)) != fmt.Sprint(c.IDs) ||
			fmt.Sprint(ints(gotMask)) != fmt.Sprint(c.Mask) || gotMask.DType != DTypeInt32 || gotIDs.DType != DTypeInt64 {
			t.Errorf("%s: shape %v ids %.200v mask %.100v\nwant shape %v ids %.200v mask %.100v", c.Name, gotIDs.Shape, ints(gotIDs), ints(gotMask), c.Shape, c.IDs, c.Mask)
		}
		if st := g.Nodes[g.index["ids64"]].Out; st.Len > 0 && st.Len != c.Shape[len(c.Shape)-1] {
			t.Errorf("%s: static length %d, output %v", c.Name, st.Len, c.Shape)
		}
		ids += len(c.IDs)
	}
	t.Logf("%d cases, %d ids compared", len(cases), ids)
}

// FuzzTokenizeSample: any sample bytes (JSON lines here: the parsing a text source gets) give
// rows or a sample error, never a panic.
func FuzzTokenizeSample(f *testing.F) {
	g, err := Compile(tokenizeGraph(f, map[string]any{"input": "jsonl", "pack": true, "max_length": 4.0, "padding": "max_length",
		"pad_id": 4.0, "sep_token": "<eos>", "max_tokens": 4096.0}), nil, Limits{})
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(`{"text": "ab a"}` + "\n" + `{"text": "b\u00e9\ud83d\ude00"}`))
	f.Add([]byte(`{"text": "\\"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := g.Run(context.Background(), Sample{Key: "k", Data: b})
		if err == nil && out.Values[0].Tensor.Shape[1] != 4 {
			t.Fatalf("shape %v", out.Values[0].Tensor.Shape)
		}
	})
}

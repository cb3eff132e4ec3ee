package xformgraph

import (
	"encoding/json"
	"testing"

	"google.golang.org/protobuf/proto"

	xformv1 "github.com/newtricks/newtricks/proto/gen/xformv1"
)

// FuzzCompileGraph: a graph spec arrives from every trainer (JSON or binary proto); Compile
// refuses what it cannot run without panicking.
func FuzzCompileGraph(f *testing.F) {
	f.Add([]byte(`{"version": 1, "seed": 7, "nodes": [{"id": "d", "op": "decode_image", "input": "input"},
		{"id": "c", "op": "random_resized_crop", "input": "d", "params": {"size": [64]}},
		{"id": "t", "op": "to_tensor", "input": "c", "params": {"layout": "CHW", "dtype": "float32"}}], "outputs": ["t"]}`))
	f.Add([]byte(`{"version": 1, "nodes": [{"id": "v", "op": "decode_video", "input": "input", "params": {"mode": "uniform", "num": 100000000, "width": 100000, "height": 100000}}], "outputs": ["v"]}`))
	tok, _ := json.Marshal(map[string]any{"version": 1, "nodes": []any{
		map[string]any{"id": "t", "op": "tokenize", "input": "input", "params": map[string]any{"tokenizer": tinyTokenizer,
			"input": "jsonl", "pack": true, "max_length": 16, "padding": "max_length", "pad_id": 4, "sep_token": "<eos>"}},
		map[string]any{"id": "i", "op": "token_ids", "input": "t"}}, "outputs": []string{"i"}})
	f.Add(tok)
	g := &xformv1.Graph{Version: 1, Nodes: []*xformv1.Node{NewNodeSpec("d", "decode_image", "input", nil)}, Outputs: []string{"d"}}
	b, _ := proto.Marshal(g)
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		spec, err := ParseJSON(b)
		if err != nil {
			spec = &xformv1.Graph{}
			if proto.Unmarshal(b, spec) != nil {
				return
			}
		}
		Compile(spec, nil, Limits{})
	})
}

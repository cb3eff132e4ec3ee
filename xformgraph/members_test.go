package xformgraph

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
)

// TestMemberInputs: a graph reads several members of one sample through "input:NAME" nodes
// (two views and a caption here), each output is the one a single-input graph gives on that
// member alone, the graph says which input every output comes from, old single-input graphs
// are unchanged, and a sample without a member the graph reads fails naming it.
func TestMemberInputs(t *testing.T) {
	ps, err := structpb.NewStruct(map[string]any{"tokenizer": tinyTokenizer})
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := protojson.Marshal(ps)
	g := mustCompile(t, `{"version":1,"seed":"5","nodes":[
	  {"id":"dl","op":"decode_image","input":"input:left.jpg"},
	  {"id":"cl","op":"random_resized_crop","input":"dl","params":{"size":[8]}},
	  {"id":"l","op":"to_tensor","input":"cl","params":{"dtype":"uint8"}},
	  {"id":"dr","op":"decode_image","input":"input:right.png"},
	  {"id":"r","op":"to_tensor","input":"dr","params":{"dtype":"uint8"}},
	  {"id":"tk","op":"tokenize","input":"input:txt","params":`+string(tok)+`},
	  {"id":"ids","op":"token_ids","input":"tk"}],
	 "outputs":["l","r","ids"]}`)
	if !slices.Equal(g.Sources, []string{"left.jpg", "right.png", "txt"}) || !slices.Equal(g.Members, []string{"left.jpg", "right.png", "txt"}) || g.UsesPrimary() {
		t.Fatalf("sources %v members %v primary %v", g.Sources, g.Members, g.UsesPrimary())
	}
	left, right := testJPEG(t, 21, 13, false), testPNG(t, 9, 7)
	out, err := g.Run(context.Background(), Sample{Key: "k", Epoch: 3, Data: left,
		Members: map[string][]byte{"left.jpg": left, "right.png": right, "txt": []byte("ab a"), "cls": []byte("1")}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := out.AppendFrames(nil)
	if err != nil {
		t.Fatal(err)
	}
	// The same outputs from single-input graphs (same node ids: same random streams).
	one := func(spec string, data []byte) []byte {
		o, err := mustCompile(t, spec).Run(context.Background(), Sample{Key: "k", Epoch: 3, Data: data})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := o.AppendFrames(nil)
		return b
	}
	want := one(`{"version":1,"seed":"5","nodes":[{"id":"dl","op":"decode_image","input":"input"},
	  {"id":"cl","op":"random_resized_crop","input":"dl","params":{"size":[8]}},
	  {"id":"l","op":"to_tensor","input":"cl","params":{"dtype":"uint8"}}],"outputs":["l"]}`, left)
	want = append(want, one(`{"version":1,"seed":"5","nodes":[{"id":"dr","op":"decode_image","input":"input"},
	  {"id":"r","op":"to_tensor","input":"dr","params":{"dtype":"uint8"}}],"outputs":["r"]}`, right)...)
	want = append(want, one(`{"version":1,"seed":"5","nodes":[{"id":"tk","op":"tokenize","input":"input","params":`+string(tok)+`},
	  {"id":"ids","op":"token_ids","input":"tk"}],"outputs":["ids"]}`, []byte("ab a"))...)
	if !bytes.Equal(got, want) {
		t.Error("member outputs differ from single-input runs on the members")
	}
	_, err = g.Run(context.Background(), Sample{Key: "k", Data: left, Members: map[string][]byte{"left.jpg": left, "txt": []byte("a")}})
	if !errors.Is(err, ErrMissingMember) || !errors.Is(err, ErrDecode) {
		t.Errorf("missing member: %v", err)
	}
	// A single-input graph: its one source is the primary input.
	old := mustCompile(t, `{"version":1,"nodes":[{"id":"d","op":"decode_image","input":"input"},{"id":"t","op":"to_tensor","input":"d"}],"outputs":["t"]}`)
	if !slices.Equal(old.Sources, []string{""}) || old.Members != nil || !old.UsesPrimary() {
		t.Errorf("old graph: sources %v members %v", old.Sources, old.Members)
	}
	for _, bad := range []string{"input:", "input:a b", "input:a/b", "input:" + string(bytes.Repeat([]byte("x"), 129))} {
		spec, _ := ParseJSON([]byte(`{"version":1,"nodes":[{"id":"d","op":"decode_image","input":"` + bad + `"}],"outputs":["d"]}`))
		if _, err := Compile(spec, nil, Limits{}); !errors.Is(err, ErrInvalidGraph) {
			t.Errorf("input %q: %v", bad, err)
		}
	}
	spec, _ := ParseJSON([]byte(`{"version":1,"nodes":[{"id":"input:x","op":"decode_image","input":"input"}],"outputs":["input:x"]}`))
	if _, err := Compile(spec, nil, Limits{}); !errors.Is(err, ErrInvalidGraph) {
		t.Errorf("a node named like an input: %v", err)
	}
}

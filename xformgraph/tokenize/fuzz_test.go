package tokenize

import (
	"encoding/json"
	"fmt"
	"testing"
)

// fuzzTokenizer exercises most of the pipeline: normalizers, added tokens of every kind,
// the ByteLevel pre-tokenizer, byte-level BPE with a suffix, a template.
func fuzzTokenizer(tb testing.TB) *Tokenizer {
	vocab := map[string]int{"<s>": 0, "</s>": 1, "Ġ": 2, "a": 3, "b": 4, "ab": 5, "Ġab": 6, "c": 7}
	for b := 0; b < 256; b++ {
		if _, ok := vocab[string(byteChar[b])]; !ok {
			vocab[string(byteChar[b])] = len(vocab)
		}
	}
	j := map[string]any{"version": "1.0",
		"normalizer":    map[string]any{"type": "Sequence", "normalizers": []any{map[string]any{"type": "NFKC"}, map[string]any{"type": "Lowercase"}, map[string]any{"type": "Strip", "strip_left": true, "strip_right": false}}},
		"pre_tokenizer": map[string]any{"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
		"post_processor": map[string]any{"type": "RobertaProcessing", "sep": []any{"</s>", 1}, "cls": []any{"<s>", 0},
			"trim_offsets": true, "add_prefix_space": true},
		"added_tokens": []any{
			map[string]any{"id": 0, "content": "<s>", "single_word": false, "lstrip": true, "rstrip": true, "normalized": false, "special": true},
			map[string]any{"id": 9, "content": "abc", "single_word": true, "lstrip": false, "rstrip": false, "normalized": true, "special": false},
		},
		"model": map[string]any{"type": "BPE", "vocab": vocab, "merges": [][]string{{"a", "b"}, {"Ġ", "ab"}}},
	}
	b, _ := json.Marshal(j)
	tk, err := Load(b)
	if err != nil {
		tb.Fatal(err)
	}
	return tk
}

// FuzzEncode: any text either encodes (the same ids every time, ids and mask of one length,
// truncation and padding respected) or is refused as invalid UTF-8; nothing panics.
func FuzzEncode(f *testing.F) {
	tk := fuzzTokenizer(f)
	for _, s := range []string{"", "ab ab", " <s>abc ab\u00a0", "Ａｂ\u0301\u0323 '' 's 1 2", "x\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o := Options{AddSpecialTokens: true, Truncation: &Truncation{MaxLength: 7, Left: len(s)%2 == 0}, Padding: &Padding{Length: 7, PadID: 1}}
		a, err := tk.Encode(s, o)
		if err != nil {
			if invalidUTF8(s) == nil {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		b, _ := tk.Encode(s, o)
		if fmt.Sprint(a) != fmt.Sprint(b) || len(a.IDs) != 7 || len(a.Mask) != 7 {
			t.Fatalf("%q: %v then %v", s, a, b)
		}
		full, err := tk.Encode(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range full.IDs {
			if int(id) >= len(tk.model.vocab)+1 {
				t.Fatalf("%q: id %d", s, id)
			}
		}
	})
}

// FuzzLoad: a tokenizer.json from a graph spec is loaded or refused, never a panic.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(`{"version": "1.0", "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}}`))
	f.Add([]byte(`{"model": {"vocab": {"a": 0}, "merges": [["a", "a"]], "continuing_subword_prefix": "##"}, "added_tokens": [{"id": 1, "content": "a", "single_word": true, "lstrip": true, "rstrip": true, "normalized": true, "special": true}], "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "_"}]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if tk, err := Load(b); err == nil {
			tk.Encode("ab a_##", Options{AddSpecialTokens: true})
		}
	})
}

package tokenize

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// pieces returns the pre-tokens of s (without prefix space) as strings.
func pieces(s string) []string {
	var out []string
	for _, p := range gpt2Split(s, nil) {
		out = append(out, s[p[0]:p[1]])
	}
	return out
}

// TestGPT2Split pins the scanner to the regex's semantics on cases worked out by hand
// (TestPreTokenizerEdgeCases and TestUnicodeTables compare it with Oniguruma itself).
func TestGPT2Split(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"Hello world", []string{"Hello", " world"}},
		{"   a", []string{"  ", " a"}},             // \s+(?!\S) leaves the last space to " a"
		{"a\t\tb", []string{"a", "\t", "\t", "b"}}, // the last tab: \s+(?!\S) fails, \s+ takes it
		{"a \t b", []string{"a", " \t", " b"}},
		{"x  ", []string{"x", "  "}}, // at the end (?!\S) holds
		{"a\n\nb", []string{"a", "\n", "\n", "b"}},
		{"I'M don't", []string{"I", "'", "M", " don", "'t"}}, // contractions are lowercase only
		{"we're 'll'", []string{"we", "'re", " '", "ll", "'"}},
		{"'sup", []string{"'s", "up"}},
		{" 's", []string{" '", "s"}},
		{"!!'s", []string{"!!'", "s"}}, // inside a punctuation run the apostrophe is punctuation
		{"1 2 33", []string{"1", " 2", " 33"}},
		{"abc123def", []string{"abc", "123", "def"}},
		{"!!a", []string{"!!", "a"}},
		{" !!", []string{" !!"}},
		{"字字 字", []string{"字字", " 字"}},
		{"x\u00a0y", []string{"x", "\u00a0", "y"}}, // NBSP is \s but not the optional space
		{"x \u00a0y", []string{"x", " ", "\u00a0", "y"}},
		{"e\u0301", []string{"e", "\u0301"}}, // a combining mark is neither \p{L} nor \p{N}
		{"\x00\x01 ", []string{"\x00\x01", " "}},
		{"", nil},
		{" ", []string{" "}},
	} {
		if got := pieces(c.in); fmt.Sprintf("%q", got) != fmt.Sprintf("%q", c.want) {
			t.Errorf("%+q: %q, want %q", c.in, got, c.want)
		}
	}
}

// tiny builds a tokenizer.json around a BPE model (no pre-tokenizer unless pre is set).
func tiny(t *testing.T, vocab map[string]int, merges any, extra map[string]any) *Tokenizer {
	t.Helper()
	model := map[string]any{"type": "BPE", "dropout": nil, "unk_token": nil, "continuing_subword_prefix": nil,
		"end_of_word_suffix": nil, "fuse_unk": false, "byte_fallback": false, "ignore_merges": false, "vocab": vocab, "merges": merges}
	j := map[string]any{"version": "1.0", "truncation": nil, "padding": nil, "added_tokens": []any{}, "normalizer": nil,
		"pre_tokenizer": nil, "post_processor": nil, "decoder": nil, "model": model}
	for k, v := range extra {
		if strings.HasPrefix(k, "model.") {
			model[k[6:]] = v
		} else {
			j[k] = v
		}
	}
	b, _ := json.Marshal(j)
	tk, err := Load(b)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func ids(t *testing.T, tk *Tokenizer, s string) []uint32 {
	t.Helper()
	e, err := tk.Encode(s, Options{AddSpecialTokens: true})
	if err != nil {
		t.Fatal(err)
	}
	return e.IDs
}

// TestMergeOrder: merges apply by rank, lowest first, leftmost on ties; both merge formats;
// a pair listed twice keeps its last rank.
func TestMergeOrder(t *testing.T) {
	vocab := map[string]int{"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5, "aa": 6, "aaa": 7}
	for _, merges := range []any{
		[]string{"b c", "a b", "a bc", "a a", "aa a"},
		[][]string{{"b", "c"}, {"a", "b"}, {"a", "bc"}, {"a", "a"}, {"aa", "a"}},
	} {
		tk := tiny(t, vocab, merges, nil)
		// "abc": (b,c) has rank 0 < (a,b) rank 1, so bc first, then (a,bc) -> abc.
		if got := ids(t, tk, "abc"); fmt.Sprint(got) != "[5]" {
			t.Errorf("%v: abc -> %v", merges, got)
		}
		// "aaa": (a,a) at 0 and 1 tie; the leftmost merges: aa a -> aaa.
		if got := ids(t, tk, "aaa"); fmt.Sprint(got) != "[7]" {
			t.Errorf("aaa -> %v", got)
		}
		if got := ids(t, tk, "aaaa"); fmt.Sprint(got) != "[6 6]" {
			t.Errorf("aaaa -> %v", got)
		}
	}
	// (a,b) listed again after (b,c)... ranks: the last listing wins, so now (a,b) has rank
	// 2 > (b,c) rank 1 -> "abc" = a + bc -> abc again; but with (a,bc) missing it stays a, bc.
	tk := tiny(t, vocab, []string{"a b", "b c", "a b"}, nil)
	if got := ids(t, tk, "abc"); fmt.Sprint(got) != "[0 4]" {
		t.Errorf("duplicate merge: abc -> %v, want [0 4]", got)
	}
	tk = tiny(t, vocab, []string{"a b", "b c"}, nil)
	if got := ids(t, tk, "abc"); fmt.Sprint(got) != "[3 2]" {
		t.Errorf("abc -> %v, want [3 2]", got)
	}
	// A long word takes the queue path: the same result as the direct loop.
	long := strings.Repeat("abc", 40)
	if got := ids(t, tiny(t, vocab, []string{"b c", "a b", "a bc"}, nil), long); len(got) != 40 || got[0] != 5 || got[39] != 5 {
		t.Errorf("long word: %v", got)
	}
}

// TestUnknownCharacters: without unk_token an unknown character is dropped (as in
// tokenizers), with it unk (fused or not), with byte_fallback <0xNN> tokens.
func TestUnknownCharacters(t *testing.T) {
	vocab := map[string]int{"a": 0, "<unk>": 1, "<0xC3>": 2, "<0xA9>": 3, "b": 4}
	if got := ids(t, tiny(t, vocab, []string{}, nil), "aéb"); fmt.Sprint(got) != "[0 4]" {
		t.Errorf("no unk: %v", got)
	}
	if got := ids(t, tiny(t, vocab, []string{}, map[string]any{"model.unk_token": "<unk>"}), "aééb"); fmt.Sprint(got) != "[0 1 1 4]" {
		t.Errorf("unk: %v", got)
	}
	if got := ids(t, tiny(t, vocab, []string{}, map[string]any{"model.unk_token": "<unk>", "model.fuse_unk": true}), "aééb"); fmt.Sprint(got) != "[0 1 4]" {
		t.Errorf("fused unk: %v", got)
	}
	if got := ids(t, tiny(t, vocab, []string{}, map[string]any{"model.byte_fallback": true}), "aéb"); fmt.Sprint(got) != "[0 2 3 4]" {
		t.Errorf("byte fallback: %v", got)
	}
}

// TestAddedTokens: leftmost-longest matching before normalization and pre-tokenization;
// lstrip/rstrip take the spaces beside; single_word needs word boundaries; ids are assigned
// as tokenizers assigns them (vocabulary first, then vocab_size, ...).
func TestAddedTokens(t *testing.T) {
	vocab := map[string]int{"a": 0, "b": 1, "<": 2, ">": 3, " ": 4, "x": 5}
	added := []any{
		map[string]any{"id": 99, "content": "<a>", "single_word": false, "lstrip": false, "rstrip": true, "normalized": false, "special": true},
		map[string]any{"id": 99, "content": "<a><b>", "single_word": false, "lstrip": true, "rstrip": false, "normalized": false, "special": true},
		map[string]any{"id": 0, "content": "ab", "single_word": true, "lstrip": false, "rstrip": false, "normalized": true, "special": false},
		map[string]any{"id": 0, "content": "x", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": false},
	}
	tk := tiny(t, vocab, []string{}, map[string]any{"added_tokens": added})
	// "<a>" gets 6 (vocab size), "<a><b>" 7, "ab" 8, "x" keeps its vocabulary id 5.
	for _, c := range []struct{ in, want string }{
		{"<a><b>", "[7]"},             // longest at the leftmost position
		{"b <a>  a", "[1 4 6 0]"},     // rstrip eats the spaces after <a>
		{"b  <a><b>a", "[1 7 0]"},     // lstrip eats the spaces before
		{"ab", "[8]"},                 // single word
		{"xab", "[5 8]"},              // x splits first; ab is then a piece of its own, at its boundaries
		{"ab b", "[8 4 1]"},           //
		{"aab", "[0 0 1]"},            // not single word
		{"<a", "[2 0]"},               // partial: model
		{"a<a><b>x", "[0 7 5]"},       //
		{"<a><a><b>", "[6 7]"},        // leftmost first: <a> at 0, then <a><b>
		{"  <a> <a><b>", "[4 4 6 7]"}, // rstrip of <a> takes the space lstrip of <a><b> would
	} {
		if got := fmt.Sprint(ids(t, tk, c.in)); got != c.want {
			t.Errorf("%q: %s, want %s", c.in, got, c.want)
		}
	}
}

// TestTruncationPadding on a tokenizer with a BOS/EOS template.
func TestTruncationPadding(t *testing.T) {
	vocab := map[string]int{"a": 0, "b": 1, "<s>": 2, "</s>": 3, "<pad>": 4}
	post := map[string]any{"type": "TemplateProcessing",
		"single":         []any{map[string]any{"SpecialToken": map[string]any{"id": "<s>", "type_id": 0}}, map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}}, map[string]any{"SpecialToken": map[string]any{"id": "</s>", "type_id": 0}}},
		"pair":           []any{},
		"special_tokens": map[string]any{"<s>": map[string]any{"id": "<s>", "ids": []int{2}, "tokens": []string{"<s>"}}, "</s>": map[string]any{"id": "</s>", "ids": []int{3}, "tokens": []string{"</s>"}}}}
	tk := tiny(t, vocab, []string{}, map[string]any{"post_processor": post})
	enc := func(s string, o Options) string {
		e, err := tk.Encode(s, o)
		if err != nil {
			return err.Error()
		}
		return fmt.Sprint(e.IDs, e.Mask)
	}
	for _, c := range []struct {
		in   string
		o    Options
		want string
	}{
		{"abab", Options{AddSpecialTokens: true}, "[2 0 1 0 1 3] [1 1 1 1 1 1]"},
		{"abab", Options{}, "[0 1 0 1] [1 1 1 1]"},
		{"abab", Options{AddSpecialTokens: true, Truncation: &Truncation{MaxLength: 4}}, "[2 0 1 3] [1 1 1 1]"},
		{"abab", Options{AddSpecialTokens: true, Truncation: &Truncation{MaxLength: 4, Left: true}}, "[2 0 1 3] [1 1 1 1]"},
		{"abbb", Options{AddSpecialTokens: true, Truncation: &Truncation{MaxLength: 3, Left: true}}, "[2 1 3] [1 1 1]"},
		{"abab", Options{AddSpecialTokens: true, Truncation: &Truncation{MaxLength: 2}}, "[2 3] [1 1]"},
		{"abab", Options{AddSpecialTokens: true, Truncation: &Truncation{MaxLength: 1}}, "tokenize: limit exceeded: truncation to 1 tokens leaves no room for the 2 special tokens"},
		{"ab", Options{AddSpecialTokens: true, Padding: &Padding{Length: 6, PadID: 4}}, "[2 0 1 3 4 4] [1 1 1 1 0 0]"},
		{"ab", Options{AddSpecialTokens: true, Padding: &Padding{Length: 6, PadID: 4, Left: true}}, "[4 4 2 0 1 3] [0 0 1 1 1 1]"},
		{"ab", Options{Padding: &Padding{Multiple: 3, PadID: 4}}, "[0 1 4] [1 1 0]"},
		{"abababab", Options{Padding: &Padding{Length: 4, PadID: 4}}, "[0 1 0 1 0 1 0 1] [1 1 1 1 1 1 1 1]"}, // padding never truncates
		{"abababab", Options{MaxTokens: 5}, "tokenize: limit exceeded: the text gives more than 5 tokens (max_tokens)"},
		{"", Options{AddSpecialTokens: true}, "[2 3] [1 1]"},
	} {
		if got := enc(c.in, c.o); got != c.want {
			t.Errorf("%q %+v: %s, want %s", c.in, c.o, got, c.want)
		}
	}
}

func TestInvalidUTF8(t *testing.T) {
	tk := tiny(t, map[string]int{"a": 0}, []string{}, nil)
	for _, s := range []string{"a\xffb", "\xed\xa0\x80", "\xc3"} {
		if _, err := tk.Encode(s, Options{}); !errors.Is(err, ErrText) {
			t.Errorf("%q: %v, want ErrText", s, err)
		}
	}
}

// TestLoadRefuses: what is not implemented is refused with an error naming it, never
// ignored; limits hold.
func TestLoadRefuses(t *testing.T) {
	base := func() map[string]any {
		return map[string]any{"version": "1.0", "added_tokens": []any{}, "normalizer": nil, "pre_tokenizer": nil,
			"post_processor": nil, "decoder": map[string]any{"type": "Whatever"},
			"model": map[string]any{"type": "BPE", "vocab": map[string]int{"a": 0, "b": 1, "ab": 2}, "merges": []string{"a b"}}}
	}
	set := func(path string, v any) []byte {
		j := base()
		m := j
		parts := strings.Split(path, ".")
		for _, p := range parts[:len(parts)-1] {
			m = m[p].(map[string]any)
		}
		m[parts[len(parts)-1]] = v
		b, _ := json.Marshal(j)
		return b
	}
	if _, err := Load(set("version", "1.0")); err != nil {
		t.Fatalf("base: %v", err)
	}
	for _, c := range []struct {
		b    []byte
		is   error
		want string
	}{
		{set("model.type", "WordPiece"), ErrUnsupported, `model "WordPiece"`},
		{set("model.dropout", 0.1), ErrUnsupported, "dropout"},
		{set("model.vocab", map[string]int{"a": 0}), ErrInvalid, "not in the vocabulary"},
		{set("model.merges", []string{"a b c"}), ErrInvalid, `"a b c"`},
		{set("model.unk_token", "<unk>"), ErrInvalid, "unk_token"},
		{set("model.vocab", map[string]int64{"a": 0, "b": 1, "ab": 1 << 31}), ErrLimit, "above"},
		{set("model.surprise", true), ErrUnsupported, "unknown key(s) surprise"},
		{set("normalizer", map[string]any{"type": "BertNormalizer"}), ErrUnsupported, `normalizer "BertNormalizer"`},
		{set("normalizer", map[string]any{"type": "Replace", "pattern": map[string]any{"Regex": " +"}, "content": " "}), ErrUnsupported, "Regex"},
		{set("normalizer", map[string]any{"type": "Sequence", "normalizers": []any{map[string]any{"type": "NFC"}, map[string]any{"type": "Precompiled"}}}), ErrUnsupported, "normalizer.normalizers[1]"},
		{set("pre_tokenizer", map[string]any{"type": "Metaspace"}), ErrUnsupported, `pre-tokenizer "Metaspace"`},
		{set("pre_tokenizer", map[string]any{"type": "Sequence", "pretokenizers": []any{map[string]any{"type": "Split"}, map[string]any{"type": "ByteLevel"}}}), ErrUnsupported, "Sequence of 2"},
		{set("post_processor", map[string]any{"type": "Custom"}), ErrUnsupported, `post-processor "Custom"`},
		{set("truncation", map[string]any{"direction": "Right", "max_length": 8, "strategy": "OnlySecond", "stride": 0}), ErrUnsupported, "OnlySecond"},
		{set("version", "2.0"), ErrUnsupported, "version"},
		{set("normalizer", map[string]any{"kind": "NFC"}), ErrUnsupported, `no "type"`},
		{[]byte(`{"version": "1.0", "model": ` + strings.Repeat(" ", MaxTokenizerBytes) + `{}}`), ErrLimit, "limit"},
		{[]byte(`[1, 2]`), ErrInvalid, "object"},
	} {
		_, err := Load(c.b)
		if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.80s: %v, want %v containing %q", c.b, err, c.is, c.want)
		}
	}
}

func TestPacker(t *testing.T) {
	sep, pad := uint32(9), uint32(0)
	p := &Packer{Length: 4, Sep: &sep, Pad: &pad}
	p.Add([]uint32{1, 2, 3})
	p.Add([]uint32{4})
	p.Add([]uint32{5, 6})
	ids, mask, rows := p.Rows()
	if fmt.Sprint(ids, mask, rows) != "[1 2 3 9 4 9 5 6 9 0 0 0] [1 1 1 1 1 1 1 1 1 0 0 0] 3" {
		t.Errorf("pad: %v %v %d", ids, mask, rows)
	}
	p.Pad = nil
	ids, mask, rows = p.Rows()
	if fmt.Sprint(ids, mask, rows) != "[1 2 3 9 4 9 5 6] [1 1 1 1 1 1 1 1] 2" {
		t.Errorf("drop: %v %v %d", ids, mask, rows)
	}
}

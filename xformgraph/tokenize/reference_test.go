package tokenize

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/newtricks/newtricks/xformgraph/internal/testreq"
)

// The reference: testdata/reference.py trains tokenizers with the `tokenizers` package and
// writes what it gives for a generated corpus (see the script's doc). Its output depends only
// on the script and the tokenizers release, so it is cached between runs (testreq.Cached:
// about two CPU-minutes of Python, made again when either changes); the Go side always runs.

// pythonWithTokenizers returns the reference Python (NEWTRICKS_PYTHON) and its tokenizers
// version if it imports tokenizers, else fails or skips t (testreq).
func pythonWithTokenizers(t testing.TB) (string, string) {
	t.Helper()
	py := os.Getenv("NEWTRICKS_PYTHON")
	if py == "" {
		testreq.Missing(t, "NEWTRICKS_PYTHON is not set (make xform-pyenv builds a venv with tokenizers)")
	}
	out, err := exec.Command(py, "-c", "import tokenizers; print(tokenizers.__version__)").CombinedOutput()
	if err != nil {
		testreq.Missing(t, "%s cannot import tokenizers (make xform-pyenv): %v\n%s", py, err, out)
	}
	return py, strings.TrimSpace(string(out))
}

// reference returns the reference directory: NT_TOKENIZE_REF if set (an earlier output of
// reference.py, e.g. the benchmark's), else the cached one.
func reference(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("NT_TOKENIZE_REF"); d != "" {
		return d
	}
	py, version := pythonWithTokenizers(t)
	return testreq.Cached(t, "tokenize-reference", []string{"testdata/reference.py"}, "tokenizers "+version, func(dir string) error {
		cmd := exec.Command(py, "testdata/reference.py", dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("reference.py: %v\n%s", err, out)
		}
		fmt.Fprintf(os.Stderr, "%s", out)
		return nil
	})
}

type refCase struct {
	Tokenizer        string          `json:"tokenizer"`
	Name             string          `json:"name"`
	AddSpecialTokens bool            `json:"add_special_tokens"`
	Truncation       json.RawMessage `json:"truncation"`
	Padding          json.RawMessage `json:"padding"`
	Pack             *struct {
		Length    int     `json:"length"`
		SepID     *uint32 `json:"sep_id"`
		PadID     *uint32 `json:"pad_id"`
		Direction string  `json:"direction"`
	} `json:"pack"`
	Docs  [2]int `json:"docs"`
	Group int    `json:"group"`
}

func readDocs(t *testing.T, dir string) []string { return readDocsTB(t, dir) }

func readDocsTB(t testing.TB, dir string) []string {
	b, err := os.ReadFile(filepath.Join(dir, "docs.bin"))
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint32(b)
	b = b[4:]
	docs := make([]string, n)
	for i := range docs {
		l := binary.LittleEndian.Uint32(b)
		docs[i] = string(b[4 : 4+l])
		b = b[4+l:]
	}
	return docs
}

type refReader struct{ b []byte }

func (r *refReader) next() (ids []uint32, mask []uint8, rows int) {
	rows = int(binary.LittleEndian.Uint32(r.b))
	l := int(binary.LittleEndian.Uint32(r.b[4:]))
	r.b = r.b[8:]
	ids = make([]uint32, rows*l)
	for i := range ids {
		ids[i] = binary.LittleEndian.Uint32(r.b[4*i:])
	}
	r.b = r.b[4*rows*l:]
	mask = append([]uint8(nil), r.b[:rows*l]...)
	r.b = r.b[rows*l:]
	return ids, mask, rows
}

// options builds the Encode options of a case the way the Go op builds them from its
// parameters: "file" takes the tokenizer.json's own settings.
func caseOptions(t *testing.T, tk *Tokenizer, c refCase) Options {
	o := Options{AddSpecialTokens: c.AddSpecialTokens}
	var s string
	if json.Unmarshal(c.Truncation, &s) == nil && s == "file" {
		o.Truncation = tk.Truncation
	} else if !isNull(c.Truncation) {
		var tr struct {
			MaxLength int    `json:"max_length"`
			Direction string `json:"direction"`
		}
		if err := json.Unmarshal(c.Truncation, &tr); err != nil {
			t.Fatal(err)
		}
		o.Truncation = &Truncation{MaxLength: tr.MaxLength, Left: tr.Direction == "left"}
	}
	if json.Unmarshal(c.Padding, &s) == nil && s == "file" {
		o.Padding = tk.Padding
	} else if !isNull(c.Padding) {
		var p struct {
			Length    *int   `json:"length"`
			Direction string `json:"direction"`
			PadID     uint32 `json:"pad_id"`
			Multiple  *int   `json:"pad_to_multiple_of"`
		}
		if err := json.Unmarshal(c.Padding, &p); err != nil {
			t.Fatal(err)
		}
		o.Padding = &Padding{Left: p.Direction == "left", PadID: p.PadID}
		if p.Length != nil {
			o.Padding.Length = *p.Length
		}
		if p.Multiple != nil {
			o.Padding.Multiple = *p.Multiple
		}
	}
	return o
}

// TestAgainstTokenizers compares the ids and attention masks of every case of the reference
// (four tokenizer.json configurations, a few MB of text, truncation, padding and packing
// variants) with tokenizers', bit for bit.
func TestAgainstTokenizers(t *testing.T) {
	dir := reference(t)
	docs := readDocs(t, dir)
	var cases []refCase
	b, err := os.ReadFile(filepath.Join(dir, "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	res, err := os.ReadFile(filepath.Join(dir, "results.bin"))
	if err != nil {
		t.Fatal(err)
	}
	rr := &refReader{b: res}
	toks := map[string]*Tokenizer{}
	var nDocs, nTokens, nBytes, nCases int
	for _, c := range cases {
		tk := toks[c.Tokenizer]
		if tk == nil {
			js, err := os.ReadFile(filepath.Join(dir, c.Tokenizer+".json"))
			if err != nil {
				t.Fatal(err)
			}
			if tk, err = Load(js); err != nil {
				t.Fatalf("%s: %v", c.Tokenizer, err)
			}
			toks[c.Tokenizer] = tk
		}
		name := c.Tokenizer + "/" + c.Name
		bad := 0
		check := func(what string, gotIDs []uint32, gotMask []uint8, wantIDs []uint32, wantMask []uint8) {
			if equalIDs(gotIDs, wantIDs) && bytes.Equal(gotMask, wantMask) {
				return
			}
			bad++
			if bad <= 3 {
				i := 0
				for i < len(gotIDs) && i < len(wantIDs) && gotIDs[i] == wantIDs[i] {
					i++
				}
				t.Errorf("%s: %s: ids differ at %d (go %d ids, tokenizers %d)\n go  %v\n ref %v\n mask go %v ref %v",
					name, what, i, len(gotIDs), len(wantIDs), around(gotIDs, i), around(wantIDs, i), gotMask[:min(len(gotMask), 8)], wantMask[:min(len(wantMask), 8)])
			}
		}
		lo, hi := c.Docs[0], c.Docs[1]
		if c.Pack != nil {
			for i := lo; i < hi; i += c.Group {
				wantIDs, wantMask, _ := rr.next()
				p := &Packer{Length: c.Pack.Length, Sep: c.Pack.SepID, Pad: c.Pack.PadID, PadLeft: c.Pack.Direction == "left"}
				for _, d := range docs[i:min(hi, i+c.Group)] {
					e, err := tk.Encode(d, Options{AddSpecialTokens: c.AddSpecialTokens})
					if err != nil {
						t.Fatalf("%s: doc %q: %v", name, short(d), err)
					}
					p.Add(e.IDs)
					nBytes += len(d)
				}
				ids, mask, _ := p.Rows()
				check(fmt.Sprintf("sample of documents %d..", i), ids, mask, wantIDs, wantMask)
				nTokens += len(wantIDs)
			}
		} else {
			o := caseOptions(t, tk, c)
			for _, d := range docs[lo:hi] {
				wantIDs, wantMask, _ := rr.next()
				e, err := tk.Encode(d, o)
				if err != nil {
					t.Fatalf("%s: doc %q: %v", name, short(d), err)
				}
				check(fmt.Sprintf("doc %q", short(d)), e.IDs, e.Mask, wantIDs, wantMask)
				nDocs++
				nTokens += len(wantIDs)
				nBytes += len(d)
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d differ", name, bad, hi-lo)
		}
		nCases++
	}
	if len(rr.b) != 0 {
		t.Fatalf("%d bytes of reference results left over", len(rr.b))
	}
	t.Logf("%d cases over %d tokenizers: %d document encodings and %d packed samples, %d MB of text, %d ids compared",
		nCases, len(toks), nDocs, countPacked(cases), nBytes>>20, nTokens)
}

func countPacked(cases []refCase) int {
	n := 0
	for _, c := range cases {
		if c.Pack != nil {
			n += (c.Docs[1] - c.Docs[0] + c.Group - 1) / c.Group
		}
	}
	return n
}

func equalIDs(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func around(ids []uint32, i int) []uint32 { return ids[max(0, i-3):min(len(ids), i+5)] }

func short(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// TestPreTokenizerEdgeCases compares the scanner's pieces with the GPT-2 regex run by
// tokenizers (Oniguruma) on edge cases: contractions, whitespace runs before words, digits and
// punctuation, the end of the text.
func TestPreTokenizerEdgeCases(t *testing.T) {
	dir := reference(t)
	b, err := os.ReadFile(filepath.Join(dir, "pretok.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases [][2]json.RawMessage
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		var s string
		var want []int
		json.Unmarshal(c[0], &s)
		json.Unmarshal(c[1], &want)
		if got := charEnds(s, gpt2Split(s, nil)); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%+q: ends %v, tokenizers %v", s, got, want)
		}
	}
	t.Logf("%d strings", len(cases))
}

// charEnds converts piece byte ranges to end offsets in code points.
func charEnds(s string, pieces [][2]int) []int {
	out := make([]int, 0, len(pieces))
	pos, chars := 0, 0
	for _, p := range pieces {
		chars += utf8.RuneCountInString(s[pos:p[1]])
		pos = p[1]
		out = append(out, chars)
	}
	return out
}

// TestUnicodeTables checks every code point against tokenizers: the pre-tokenizer's classes
// on a string that puts each one after a letter, a digit, a space and punctuation; the word
// boundary of single_word added tokens; and the normalizers on a string of all of them plus
// decomposed sequences and mark orders.
func TestUnicodeTables(t *testing.T) {
	dir := filepath.Join(reference(t), "unicode")
	s, err := os.ReadFile(filepath.Join(dir, "pretok.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eb, err := os.ReadFile(filepath.Join(dir, "pretok.ends"))
	if err != nil {
		t.Fatal(err)
	}
	got := charEnds(string(s), gpt2Split(string(s), nil))
	want := make([]int, len(eb)/4)
	for i := range want {
		want[i] = int(binary.LittleEndian.Uint32(eb[4*i:]))
	}
	if len(got) != len(want) {
		t.Errorf("pre-tokenizer: %d pieces, tokenizers %d", len(got), len(want))
	}
	for i := 0; i < min(len(got), len(want)); i++ {
		if got[i] != want[i] {
			rs := []rune(string(s))
			t.Fatalf("pre-tokenizer: piece %d ends at %d, tokenizers at %d, near %+q", i, got[i], want[i], string(rs[max(0, want[i]-10):min(len(rs), want[i]+10)]))
		}
	}
	bits, err := os.ReadFile(filepath.Join(dir, "single_word.bits"))
	if err != nil {
		t.Fatal(err)
	}
	k := 0
	for c := rune(0); c < 0x110000; c++ {
		if c >= 0xD800 && c <= 0xDFFF {
			continue
		}
		if matched := bits[k] == 1; matched == isWordChar(c) {
			t.Errorf("single_word after U+%04X: tokenizers matched=%v, isWordChar=%v", c, matched, isWordChar(c))
		}
		k++
	}
	text, err := os.ReadFile(filepath.Join(dir, "norm.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []struct {
		name string
		n    normalizer
	}{{"NFC", unicodeNorm(formNFC)}, {"NFD", unicodeNorm(formNFD)}, {"NFKC", unicodeNorm(formNFKC)},
		{"NFKD", unicodeNorm(formNFKD)}, {"Lowercase", lowercase{}}, {"StripAccents", stripAccents{}}} {
		want, err := os.ReadFile(filepath.Join(dir, "norm."+n.name))
		if err != nil {
			t.Fatal(err)
		}
		got := n.n.normalize(string(text))
		if got != string(want) {
			gp, wp := strings.Split(got, "\x01"), strings.Split(string(want), "\x01")
			bad := 0
			for i := 0; i < min(len(gp), len(wp)); i++ {
				if gp[i] != wp[i] {
					if bad < 5 {
						t.Errorf("%s: unit %d: go %+q, tokenizers %+q", n.name, i, gp[i], wp[i])
					}
					bad++
				}
			}
			t.Errorf("%s differs (%d units of %d/%d)", n.name, bad, len(gp), len(wp))
		}
	}
	t.Logf("%d pre-tokenizer pieces and %d code points of normalizer input compared", len(want), utf8.RuneCount(text))
}

package tokenize

import (
	"sort"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Unicode normalization as the tokenizers library does it: the unicode-normalization-alignments
// crate, whose tables are Unicode 9.0.0. Go's golang.org/x/text/unicode/norm has newer tables
// and also applies the Stream-Safe Text Format (it inserts U+034F after 30 non-starters), so
// it is used here only as a source of per-character data, restricted to the code points
// Unicode 9.0.0 assigned: a character assigned later has no decomposition, combining class 0
// and composes with nothing, as in the crate. (Decompositions and combining classes of
// assigned characters never change, and a character added later never becomes the
// composition of older ones: Unicode's normalization stability policy.) The algorithm is the
// crate's: full decomposition, a stable sort of each run of non-starters by combining class,
// then the canonical composition of UAX #15.

type normTables struct {
	ccc     map[rune]uint8
	canon   map[rune][]rune // full canonical decomposition (Hangul syllables are algorithmic)
	compat  map[rune][]rune // full compatibility decomposition, where it differs from canon
	compose map[uint64]rune // primary composites by (first, second)
}

const (
	hangulSBase  = 0xAC00
	hangulLBase  = 0x1100
	hangulVBase  = 0x1161
	hangulTBase  = 0x11A7
	hangulLCount = 19
	hangulVCount = 21
	hangulTCount = 28
	hangulNCount = hangulVCount * hangulTCount
	hangulSCount = hangulLCount * hangulNCount
)

var unormTables = sync.OnceValue(func() *normTables {
	t := &normTables{ccc: map[rune]uint8{}, canon: map[rune][]rune{}, compat: map[rune][]rune{}, compose: map[uint64]rune{}}
	a9 := assigned9()
	byDecomp := map[string]rune{} // full canonical decomposition -> the NFC-stable character
	var pairs [][3]rune
	for _, rg := range a9.R16 {
		for r := rune(rg.Lo); r <= rune(rg.Hi); r += rune(rg.Stride) {
			t.add(r, byDecomp, &pairs)
		}
	}
	for _, rg := range a9.R32 {
		for r := rune(rg.Lo); r <= rune(rg.Hi); r += rune(rg.Stride) {
			t.add(r, byDecomp, &pairs)
		}
	}
	// A primary composite's canonical decomposition is a pair (first, second) whose second
	// character does not decompose: first is the composite of the rest of the full
	// decomposition (or its only character).
	for _, p := range pairs {
		r, d := p[0], t.canon[p[0]]
		first := d[0]
		if len(d) > 2 {
			f, ok := byDecomp[string(d[:len(d)-1])]
			if !ok {
				continue
			}
			first = f
		}
		t.compose[uint64(first)<<32|uint64(d[len(d)-1])] = r
	}
	return t
})

func (t *normTables) add(r rune, byDecomp map[string]rune, pairs *[][3]rune) {
	if r >= hangulSBase && r < hangulSBase+hangulSCount || r >= 0xD800 && r <= 0xDFFF {
		return
	}
	s := string(r)
	p := norm.NFD.PropertiesString(s)
	if c := p.CCC(); c != 0 {
		t.ccc[r] = c
	}
	if d := p.Decomposition(); d != nil {
		t.canon[r] = []rune(string(d))
		if norm.NFC.String(s) == s && len(t.canon[r]) > 1 {
			byDecomp[string(t.canon[r])] = r
			*pairs = append(*pairs, [3]rune{r})
		}
	}
	if d := norm.NFKD.PropertiesString(s).Decomposition(); d != nil {
		if dr := []rune(string(d)); !equalRunes(dr, t.canon[r]) {
			t.compat[r] = dr
		}
	}
}

func equalRunes(a, b []rune) bool {
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

type normForm uint8

const (
	formNFD normForm = iota
	formNFKD
	formNFC
	formNFKC
)

// normalizeString applies form f to s with Unicode 9.0.0 data.
func normalizeString(s string, f normForm) string {
	i := 0
	for i < len(s) && s[i] < 0x80 {
		i++
	}
	if i == len(s) {
		return s // ASCII is invariant under every form
	}
	t := unormTables()
	compat := f == formNFKD || f == formNFKC
	rb := runePool.Get().(*runeBufs)
	defer runePool.Put(rb)
	buf := rb.a[:0]
	for _, r := range s {
		buf = t.decompose(buf, r, compat)
	}
	// Canonical ordering: stable sort of every run of non-starters by combining class.
	for i := 0; i < len(buf); {
		if t.ccc[buf[i]] == 0 {
			i++
			continue
		}
		j := i
		for j < len(buf) && t.ccc[buf[j]] != 0 {
			j++
		}
		if j-i > 1 {
			run := buf[i:j]
			sort.SliceStable(run, func(a, b int) bool { return t.ccc[run[a]] < t.ccc[run[b]] })
		}
		i = j
	}
	rb.a = buf
	if f == formNFC || f == formNFKC {
		rb.b = t.recompose(buf, rb.b[:0])
		buf = rb.b
	}
	out := rb.out[:0]
	for _, r := range buf {
		out = utf8.AppendRune(out, r)
	}
	rb.out = out
	return string(out)
}

// runeBufs are normalizeString's scratch buffers, reused across calls.
type runeBufs struct {
	a, b []rune
	out  []byte
}

var runePool = sync.Pool{New: func() any { return &runeBufs{} }}

func (t *normTables) decompose(buf []rune, r rune, compat bool) []rune {
	if r < 0xC0 && (!compat || r < 0xA0) {
		return append(buf, r)
	}
	if r >= hangulSBase && r < hangulSBase+hangulSCount {
		si := r - hangulSBase
		buf = append(buf, hangulLBase+si/hangulNCount, hangulVBase+(si%hangulNCount)/hangulTCount)
		if ti := si % hangulTCount; ti != 0 {
			buf = append(buf, hangulTBase+ti)
		}
		return buf
	}
	if compat {
		if d, ok := t.compat[r]; ok {
			return append(buf, d...)
		}
	}
	if d, ok := t.canon[r]; ok {
		return append(buf, d...)
	}
	return append(buf, r)
}

func (t *normTables) composePair(a, b rune) (rune, bool) {
	// Hangul: L + V -> LV, LV + T -> LVT.
	if a >= hangulLBase && a < hangulLBase+hangulLCount && b >= hangulVBase && b < hangulVBase+hangulVCount {
		return hangulSBase + ((a-hangulLBase)*hangulVCount+(b-hangulVBase))*hangulTCount, true
	}
	if a >= hangulSBase && a < hangulSBase+hangulSCount && (a-hangulSBase)%hangulTCount == 0 &&
		b > hangulTBase && b < hangulTBase+hangulTCount {
		return a + (b - hangulTBase), true
	}
	c, ok := t.compose[uint64(a)<<32|uint64(b)]
	return c, ok
}

// recompose is the crate's Recompositions iterator over a canonically ordered buffer.
func (t *normTables) recompose(in, out []rune) []rune {
	var pending []rune // uncomposed characters after the composee
	composee := rune(-1)
	lastCCC := -1 // -1: no character after the composee yet
	flush := func() {
		if composee >= 0 {
			out = append(out, composee)
		}
		out = append(out, pending...)
		pending = pending[:0]
	}
	for _, ch := range in {
		cc := int(t.ccc[ch])
		if composee < 0 {
			if cc != 0 {
				out = append(out, ch)
				continue
			}
			composee = ch
			continue
		}
		if lastCCC < 0 {
			if r, ok := t.composePair(composee, ch); ok {
				composee = r
				continue
			}
			if cc == 0 {
				out = append(out, composee)
				composee = ch
				continue
			}
			pending = append(pending, ch)
			lastCCC = cc
			continue
		}
		if lastCCC >= cc {
			if cc == 0 {
				flush()
				composee, lastCCC = ch, -1
				continue
			}
			pending = append(pending, ch)
			lastCCC = cc
			continue
		}
		if r, ok := t.composePair(composee, ch); ok {
			composee = r
			continue
		}
		pending = append(pending, ch)
		lastCCC = cc
	}
	flush()
	return out
}

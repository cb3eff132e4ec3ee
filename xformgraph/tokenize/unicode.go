package tokenize

import (
	"sort"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/rangetable"
)

// The Unicode data tokenization depends on comes from unicode_tables.go (generated from the
// tokenizers package by testdata/gen_unicode_tables.py), never from Go's unicode package, so
// ids do not change when a Go release moves to a newer Unicode version: the pre-tokenizer's
// classes are Oniguruma's (Unicode 16.0 in tokenizers 0.23), Lowercase is Rust's
// char::to_lowercase (Unicode 17.0), and NFC/NFD/NFKC/NFKD are Unicode 9.0.0's, as in the
// unicode-normalization-alignments crate tokenizers uses (see unorm.go).

type runeRange struct{ lo, hi rune }

func inRanges(t []runeRange, r rune) bool {
	i := sort.Search(len(t), func(i int) bool { return t[i].hi >= r })
	return i < len(t) && t[i].lo <= r
}

// Character classes of the GPT-2 split regex.
const (
	clsOther  uint8 = iota // [^\s\p{L}\p{N}]
	clsLetter              // \p{L}
	clsNumber              // \p{N}
	clsSpace               // \s
)

var bmpClass = sync.OnceValue(func() *[0x10000]uint8 {
	var t [0x10000]uint8
	for _, c := range []struct {
		tab []runeRange
		cls uint8
	}{{classLetter, clsLetter}, {classNumber, clsNumber}, {classSpace, clsSpace}} {
		for _, r := range c.tab {
			for x := r.lo; x <= r.hi && x < 0x10000; x++ {
				t[x] = c.cls
			}
		}
	}
	return &t
})

// charClass is the class of r in the GPT-2 split regex.
func charClass(r rune) uint8 {
	if r < 0x10000 {
		return bmpClass()[r]
	}
	switch {
	case inRanges(classLetter, r):
		return clsLetter
	case inRanges(classNumber, r):
		return clsNumber
	case inRanges(classSpace, r):
		return clsSpace
	}
	return clsOther
}

// isSpace is Rust's char::is_whitespace and the \s of Rust's regex crate: the White_Space
// property (the same 25 characters as Oniguruma's \s).
func isSpace(r rune) bool {
	if r < 0x80 {
		return r == ' ' || (r >= '\t' && r <= '\r')
	}
	return inRanges(classSpace, r)
}

// isWordChar is \w of Rust's regex crate (Alphabetic, Mark, Decimal_Number,
// Connector_Punctuation, Join_Control), used by single_word added tokens.
func isWordChar(r rune) bool {
	if r < 0x80 {
		return r == '_' || (r >= '0' && r <= '9') || (r|0x20 >= 'a' && r|0x20 <= 'z')
	}
	return inRanges(wordChar, r)
}

// appendLower appends Rust's char::to_lowercase(r) to b.
func appendLower(b []byte, r rune) []byte {
	if r < 0x80 {
		if r >= 'A' && r <= 'Z' {
			r += 'a' - 'A'
		}
		return append(b, byte(r))
	}
	if r == 0x130 {
		return append(b, "i\u0307"...)
	}
	i := sort.Search(len(lowerMap), func(i int) bool { return lowerMap[i][0] >= r })
	if i < len(lowerMap) && lowerMap[i][0] == r {
		r = lowerMap[i][1]
	}
	return utf8.AppendRune(b, r)
}

func isCombiningMark(r rune) bool { return r >= 0x300 && inRanges(combiningMark, r) }

// assigned9 is the set of code points Unicode 9.0.0 assigned.
var assigned9 = sync.OnceValue(func() *unicode.RangeTable { return rangetable.Assigned("9.0.0") })

package tokenize

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// normalizer is one tokenizers normalizer, reduced to what encoding needs: the normalized
// string (offsets are not tracked).
type normalizer interface {
	normalize(s string) string
}

type unicodeNorm normForm

func (n unicodeNorm) normalize(s string) string { return normalizeString(s, normForm(n)) }

type lowercase struct{}

func (lowercase) normalize(s string) string {
	i := 0
	for i < len(s) && s[i] < 0x80 && (s[i] < 'A' || s[i] > 'Z') {
		i++
	}
	if i == len(s) {
		return s
	}
	b := make([]byte, 0, len(s)+8)
	b = append(b, s[:i]...)
	for _, r := range s[i:] {
		b = appendLower(b, r)
	}
	return string(b)
}

type strip struct{ left, right bool }

func (n strip) normalize(s string) string {
	if n.left {
		s = strings.TrimLeftFunc(s, isSpace)
	}
	if n.right {
		s = strings.TrimRightFunc(s, isSpace)
	}
	return s
}

type stripAccents struct{}

func (stripAccents) normalize(s string) string {
	return strings.Map(func(r rune) rune {
		if isCombiningMark(r) {
			return -1
		}
		return r
	}, s)
}

// replace is Replace with a String pattern: every non-overlapping occurrence, leftmost
// first (a Regex pattern is refused).
type replace struct{ pattern, content string }

func (n replace) normalize(s string) string {
	if n.pattern == "" {
		return s
	}
	return strings.ReplaceAll(s, n.pattern, n.content)
}

type prepend struct{ s string }

func (n prepend) normalize(s string) string {
	if s == "" {
		return s
	}
	return n.s + s
}

// byteLevelNorm maps every byte to its byte-level character (the ByteLevel normalizer).
type byteLevelNorm struct{}

func (byteLevelNorm) normalize(s string) string {
	b := make([]byte, 0, 2*len(s))
	for i := 0; i < len(s); i++ {
		b = utf8.AppendRune(b, byteChar[s[i]])
	}
	return string(b)
}

type normSeq []normalizer

func (n normSeq) normalize(s string) string {
	for _, x := range n {
		s = x.normalize(s)
	}
	return s
}

func parseNormalizer(path string, raw json.RawMessage, depth int) (normalizer, error) {
	if depth > 8 {
		return nil, fmt.Errorf("%w: %s: sequences nested too deep", ErrUnsupported, path)
	}
	o, err := parseObj(path, raw)
	if err != nil {
		return nil, err
	}
	t, err := o.typ()
	if err != nil {
		return nil, err
	}
	var n normalizer
	switch t {
	case "NFC":
		n = unicodeNorm(formNFC)
	case "NFD":
		n = unicodeNorm(formNFD)
	case "NFKC":
		n = unicodeNorm(formNFKC)
	case "NFKD":
		n = unicodeNorm(formNFKD)
	case "Lowercase":
		n = lowercase{}
	case "StripAccents":
		n = stripAccents{}
	case "ByteLevel":
		n = byteLevelNorm{}
	case "Strip":
		var s strip
		if s.left, err = o.boolean("strip_left", false); err != nil {
			return nil, err
		}
		if s.right, err = o.boolean("strip_right", false); err != nil {
			return nil, err
		}
		n = s
	case "Prepend":
		var p prepend
		if p.s, err = o.str("prepend", ""); err != nil {
			return nil, err
		}
		n = p
	case "Replace":
		var pat map[string]string
		if _, err := o.decode("pattern", &pat); err != nil {
			return nil, err
		}
		s, ok := pat["String"]
		if len(pat) != 1 || !ok {
			return nil, fmt.Errorf("%w: %s: Replace with a Regex pattern (only String patterns)", ErrUnsupported, path)
		}
		r := replace{pattern: s}
		if r.content, err = o.str("content", ""); err != nil {
			return nil, err
		}
		n = r
	case "Sequence":
		var list []json.RawMessage
		if _, err := o.decode("normalizers", &list); err != nil {
			return nil, err
		}
		seq := normSeq{}
		for i, x := range list {
			c, err := parseNormalizer(fmt.Sprintf("%s.normalizers[%d]", path, i), x, depth+1)
			if err != nil {
				return nil, err
			}
			seq = append(seq, c)
		}
		n = seq
	default:
		return nil, fmt.Errorf("%w: %s: normalizer %q (supported: NFC, NFD, NFKC, NFKD, Lowercase, Strip, StripAccents, Replace with a String pattern, Prepend, ByteLevel, Sequence)", ErrUnsupported, path, t)
	}
	return n, o.done()
}

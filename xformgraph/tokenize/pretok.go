package tokenize

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// byteChar is GPT-2's bytes_to_unicode: printable Latin-1 bytes map to themselves, the other
// 68 bytes to U+0100.. in byte order.
var byteChar, charByte = func() ([256]rune, map[rune]byte) {
	var bc [256]rune
	cb := map[rune]byte{}
	n := rune(0)
	for b := 0; b < 256; b++ {
		if b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE {
			bc[b] = rune(b)
		} else {
			bc[b] = 256 + n
			n++
		}
		cb[bc[b]] = byte(b)
	}
	return bc, cb
}()

// byteLevelPre is the ByteLevel pre-tokenizer. Its pieces go to the model as raw bytes (the
// model maps them to byte-level characters itself).
type byteLevelPre struct {
	addPrefixSpace bool
	useRegex       bool
}

// preTokenizer is the pre-tokenizer of a tokenizer: only ByteLevel is supported, alone or
// last of a Sequence of ByteLevels.
func parsePreTokenizer(path string, raw json.RawMessage) (*byteLevelPre, error) {
	o, err := parseObj(path, raw)
	if err != nil {
		return nil, err
	}
	t, err := o.typ()
	if err != nil {
		return nil, err
	}
	switch t {
	case "ByteLevel":
		p := &byteLevelPre{}
		if p.addPrefixSpace, err = o.boolean("add_prefix_space", true); err != nil {
			return nil, err
		}
		if _, err = o.boolean("trim_offsets", true); err != nil { // offsets only
			return nil, err
		}
		if p.useRegex, err = o.boolean("use_regex", true); err != nil {
			return nil, err
		}
		return p, o.done()
	case "Sequence":
		var list []json.RawMessage
		if _, err := o.decode("pretokenizers", &list); err != nil {
			return nil, err
		}
		if err := o.done(); err != nil {
			return nil, err
		}
		if len(list) != 1 {
			return nil, fmt.Errorf("%w: %s: a Sequence of %d pre-tokenizers (only a single ByteLevel is supported)", ErrUnsupported, path, len(list))
		}
		return parsePreTokenizer(path+".pretokenizers[0]", list[0])
	}
	return nil, fmt.Errorf("%w: %s: pre-tokenizer %q (only ByteLevel is supported)", ErrUnsupported, path, t)
}

// split appends to pieces the pre-tokens of s (a piece of normalized text, not empty): with
// add_prefix_space a space is prepended when s does not start with one, then s is split by
// the GPT-2 regex
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// with Oniguruma's leftmost-first semantics, by hand (Go's regexp has no lookahead). Pieces
// are byte ranges of the returned string.
func (p *byteLevelPre) split(s string, pieces [][2]int) (string, [][2]int) {
	if p.addPrefixSpace && s[0] != ' ' {
		s = " " + s
	}
	if !p.useRegex {
		return s, append(pieces, [2]int{0, len(s)})
	}
	return s, gpt2Split(s, pieces)
}

func classAt(s string, i int) (uint8, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return asciiClass[c], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	return charClass(r), n
}

var asciiClass = func() (t [128]uint8) {
	for c := 0; c < 128; c++ {
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			t[c] = clsLetter
		case c >= '0' && c <= '9':
			t[c] = clsNumber
		case c == ' ' || c >= '\t' && c <= '\r':
			t[c] = clsSpace
		}
	}
	return
}()

// runOf returns the end of the run of class cls that starts at i.
func runOf(s string, i int, cls uint8) int {
	for i < len(s) {
		c, n := classAt(s, i)
		if c != cls {
			break
		}
		i += n
	}
	return i
}

// gpt2Split appends the matches of the GPT-2 regex in s. Every character belongs to one of
// the classes letter, number, space and other, so the matches cover s without gaps.
func gpt2Split(s string, out [][2]int) [][2]int {
	for i := 0; i < len(s); {
		start := i
		c := s[i]
		if c == '\'' && i+1 < len(s) {
			// 's 't 'm 'd, 're 've 'll: lowercase ASCII only, as in the regex.
			switch s[i+1] {
			case 's', 't', 'm', 'd':
				out = append(out, [2]int{i, i + 2})
				i += 2
				continue
			case 'r', 'v', 'l':
				if i+2 < len(s) && (s[i+1] != 'l' && s[i+2] == 'e' || s[i+1] == 'l' && s[i+2] == 'l') {
					out = append(out, [2]int{i, i + 3})
					i += 3
					continue
				}
			}
		}
		cls, _ := classAt(s, i)
		if c == ' ' && i+1 < len(s) {
			// " ?\p{L}+", " ?\p{N}+", " ?[^\s\p{L}\p{N}]+": a space takes the run after it.
			if next, _ := classAt(s, i+1); next != clsSpace {
				i = runOf(s, i+1, next)
				out = append(out, [2]int{start, i})
				continue
			}
		}
		if cls != clsSpace {
			i = runOf(s, i, cls)
			out = append(out, [2]int{start, i})
			continue
		}
		// A run of whitespace: "\s+(?!\S)" takes all of it at the end of the text, else all
		// but its last character (which then starts the next match), if that leaves any;
		// otherwise "\s+" takes the single character.
		end := runOf(s, i, clsSpace)
		if end < len(s) {
			last := end - 1
			for last > i && !utf8.RuneStart(s[last]) {
				last--
			}
			if last > i {
				end = last
			}
		}
		out = append(out, [2]int{start, end})
		i = end
	}
	return out
}

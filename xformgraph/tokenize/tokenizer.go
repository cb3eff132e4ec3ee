// Package tokenize is a pure-Go implementation of the encoding side of Hugging Face
// `tokenizers` for byte-level BPE tokenizers (GPT-2, RoBERTa, Llama 3-style files with a
// ByteLevel pre-tokenizer, and BPE files without one, e.g. with byte_fallback): it reads a
// tokenizer.json and produces the ids `tokenizers` produces for the same file, bit for bit,
// with its truncation and padding rules. What a tokenizer.json may contain is checked when it
// is loaded; a component or setting this package does not implement is an error naming it
// (ErrUnsupported), never silently different ids.
//
// Supported: model BPE (merges as "a b" strings or ["a", "b"] pairs, unk_token, fuse_unk,
// byte_fallback, continuing_subword_prefix, end_of_word_suffix, ignore_merges; dropout null
// or 0); normalizers NFC, NFD, NFKC, NFKD, Lowercase, Strip, StripAccents, Replace (String
// pattern), Prepend, ByteLevel and Sequence; pre-tokenizer ByteLevel (add_prefix_space,
// use_regex; alone or as the only member of a Sequence) or none; post-processors
// TemplateProcessing, ByteLevel, RobertaProcessing, BertProcessing and Sequence; added tokens
// (single_word, lstrip, rstrip, normalized) matched before pre-tokenization; the file's
// truncation (LongestFirst/OnlyFirst) and padding sections. The decoder is not used (only
// encoding is implemented) and is accepted whatever it is.
//
// Text is UTF-8; invalid UTF-8 is refused (ErrText), as a Python str cannot hold it.
package tokenize

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Errors. Every error of Load and Encode wraps one of them.
var (
	ErrInvalid     = errors.New("tokenize: invalid tokenizer.json")
	ErrUnsupported = errors.New("tokenize: unsupported tokenizer.json")
	ErrLimit       = errors.New("tokenize: limit exceeded")
	ErrText        = errors.New("tokenize: invalid text")
)

// Limits on what a tokenizer.json may hold (it may come from an untrusted graph spec).
const (
	MaxTokenizerBytes  = 16 << 20  // the whole file (Llama 3's is 9 MB, GPT-2's 1.4 MB)
	MaxVocab           = 1 << 21   // model vocabulary entries
	MaxMerges          = 1 << 22   // merges
	MaxID              = 1<<31 - 1 // ids fit an int32 tensor
	MaxAddedTokens     = 1 << 16
	MaxAddedTokenBytes = 4096    // one added token's content
	MaxAddedBytes      = 4 << 20 // all added tokens' patterns
	MaxTemplateTokens  = 1024    // special tokens a template adds
)

// Tokenizer is a loaded tokenizer.json. It is immutable and safe for concurrent use.
type Tokenizer struct {
	normalizer normalizer // nil: none
	pre        *byteLevelPre
	model      *bpe
	added      *addedVocab
	post       postProcessor // nil: none

	// The file's truncation and padding sections (nil: null).
	Truncation *Truncation
	Padding    *Padding
}

// Truncation keeps at most MaxLength tokens, special tokens included: the sequence is cut to
// MaxLength minus what the post-processor adds before they are added. Left drops tokens at
// the start instead of the end.
type Truncation struct {
	MaxLength int
	Left      bool
}

// Padding pads a sequence shorter than Length (0: its own length, tokenizers'
// BatchLongest for one sequence), rounded up to a multiple of Multiple (0: none), with PadID,
// on the left if Left.
type Padding struct {
	Length   int
	Multiple int
	Left     bool
	PadID    uint32
}

// Target is the length padding gives a sequence of n tokens.
func (p *Padding) Target(n int) int {
	l := p.Length
	if l == 0 {
		l = n
	}
	if p.Multiple > 0 && l%p.Multiple != 0 {
		l += p.Multiple - l%p.Multiple
	}
	return l
}

// Load parses a tokenizer.json.
func Load(b []byte) (*Tokenizer, error) {
	if len(b) > MaxTokenizerBytes {
		return nil, fmt.Errorf("%w: tokenizer.json of %d bytes, limit %d", ErrLimit, len(b), MaxTokenizerBytes)
	}
	o, err := parseObj("tokenizer", b)
	if err != nil {
		return nil, err
	}
	if v, err := o.str("version", "1.0"); err != nil {
		return nil, err
	} else if v != "1.0" {
		return nil, fmt.Errorf("%w: version %q, want \"1.0\"", ErrUnsupported, v)
	}
	t := &Tokenizer{}
	if raw := o.raw("normalizer"); !isNull(raw) {
		if t.normalizer, err = parseNormalizer("normalizer", raw, 0); err != nil {
			return nil, err
		}
	}
	if raw := o.raw("pre_tokenizer"); !isNull(raw) {
		if t.pre, err = parsePreTokenizer("pre_tokenizer", raw); err != nil {
			return nil, err
		}
	}
	raw := o.raw("model")
	if isNull(raw) {
		return nil, fmt.Errorf("%w: no model", ErrInvalid)
	}
	if t.model, err = parseBPE("model", raw); err != nil {
		return nil, err
	}
	if raw := o.raw("post_processor"); !isNull(raw) {
		if t.post, err = parsePostProcessor("post_processor", raw, 0); err != nil {
			return nil, err
		}
	}
	o.raw("decoder") // decoding is not implemented; any decoder is accepted
	if t.added, err = parseAddedTokens(o.raw("added_tokens"), t.model, t.normalizer); err != nil {
		return nil, err
	}
	if t.Truncation, err = parseTruncation(o.raw("truncation")); err != nil {
		return nil, err
	}
	if t.Padding, err = parsePadding(o.raw("padding")); err != nil {
		return nil, err
	}
	if err := o.done(); err != nil {
		return nil, err
	}
	return t, nil
}

func parseTruncation(raw json.RawMessage) (*Truncation, error) {
	if isNull(raw) {
		return nil, nil
	}
	o, err := parseObj("truncation", raw)
	if err != nil {
		return nil, err
	}
	tr := &Truncation{}
	dir, err := o.str("direction", "Right")
	if err != nil {
		return nil, err
	}
	strategy, err := o.str("strategy", "")
	if err != nil {
		return nil, err
	}
	var ml, stride uint64
	if ok, err := o.decode("max_length", &ml); err != nil || !ok {
		return nil, fmt.Errorf("%w: truncation.max_length", ErrInvalid)
	}
	if _, err := o.decode("stride", &stride); err != nil { // overflowing encodings only
		return nil, err
	}
	if err := o.done(); err != nil {
		return nil, err
	}
	switch dir {
	case "Right":
	case "Left":
		tr.Left = true
	default:
		return nil, fmt.Errorf("%w: truncation.direction %q", ErrInvalid, dir)
	}
	if strategy != "LongestFirst" && strategy != "OnlyFirst" {
		return nil, fmt.Errorf("%w: truncation strategy %q (a single sequence: LongestFirst or OnlyFirst)", ErrUnsupported, strategy)
	}
	if ml > MaxID {
		return nil, fmt.Errorf("%w: truncation.max_length %d", ErrLimit, ml)
	}
	tr.MaxLength = int(ml)
	return tr, nil
}

func parsePadding(raw json.RawMessage) (*Padding, error) {
	if isNull(raw) {
		return nil, nil
	}
	o, err := parseObj("padding", raw)
	if err != nil {
		return nil, err
	}
	p := &Padding{}
	var strategy json.RawMessage
	if ok, err := o.decode("strategy", &strategy); err != nil || !ok {
		return nil, fmt.Errorf("%w: padding.strategy", ErrInvalid)
	}
	var fixed struct {
		Fixed *uint64 `json:"Fixed"`
	}
	var name string
	switch {
	case json.Unmarshal(strategy, &name) == nil && name == "BatchLongest":
	case json.Unmarshal(strategy, &fixed) == nil && fixed.Fixed != nil:
		if *fixed.Fixed > MaxID {
			return nil, fmt.Errorf("%w: padding length %d", ErrLimit, *fixed.Fixed)
		}
		p.Length = int(*fixed.Fixed)
	default:
		return nil, fmt.Errorf("%w: padding.strategy %s", ErrInvalid, strategy)
	}
	dir, err := o.str("direction", "Right")
	if err != nil {
		return nil, err
	}
	switch dir {
	case "Right":
	case "Left":
		p.Left = true
	default:
		return nil, fmt.Errorf("%w: padding.direction %q", ErrInvalid, dir)
	}
	var mult *uint64
	if _, err := o.decode("pad_to_multiple_of", &mult); err != nil {
		return nil, err
	}
	if mult != nil {
		if *mult > MaxID {
			return nil, fmt.Errorf("%w: pad_to_multiple_of %d", ErrLimit, *mult)
		}
		p.Multiple = int(*mult)
	}
	if _, err := o.decode("pad_id", &p.PadID); err != nil {
		return nil, err
	}
	var u uint32
	var s string
	if _, err := o.decode("pad_type_id", &u); err != nil {
		return nil, err
	}
	if _, err := o.decode("pad_token", &s); err != nil {
		return nil, err
	}
	return p, o.done()
}

// TokenID is the id of a token: an added token's, else the model vocabulary's.
func (t *Tokenizer) TokenID(content string) (uint32, bool) {
	if id, ok := t.added.byContent[content]; ok {
		return id, true
	}
	id, ok := t.model.vocab[content]
	return id, ok
}

// SpecialTokens is the number of tokens the post-processor adds to a single sequence.
func (t *Tokenizer) SpecialTokens() int {
	if t.post == nil {
		return 0
	}
	return t.post.added()
}

// Options of one Encode.
type Options struct {
	AddSpecialTokens bool
	Truncation       *Truncation // nil: none
	Padding          *Padding    // nil: none
	// MaxTokens, if positive, fails the encoding (ErrLimit) when the text gives more tokens
	// than that before truncation.
	MaxTokens int
}

// Encoding is the result of Encode: ids and the attention mask (1 for a token, 0 for
// padding), of equal length.
type Encoding struct {
	IDs  []uint32
	Mask []uint8
}

// Encode tokenizes text as tokenizers' Tokenizer.encode(text, add_special_tokens) does with
// the truncation and padding of o (not the file's: callers pass t.Truncation and t.Padding
// for those).
func (t *Tokenizer) Encode(text string, o Options) (Encoding, error) {
	if !utf8.ValidString(text) {
		return Encoding{}, invalidUTF8(text)
	}
	nAdded := 0
	if o.AddSpecialTokens {
		nAdded = t.SpecialTokens()
	}
	limit, threshold, fromEnd := -1, -1, false
	if tr := o.Truncation; tr != nil {
		if tr.MaxLength < nAdded {
			return Encoding{}, fmt.Errorf("%w: truncation to %d tokens leaves no room for the %d special tokens", ErrLimit, tr.MaxLength, nAdded)
		}
		limit, threshold, fromEnd = tr.MaxLength-nAdded, tr.MaxLength, tr.Left
	}
	ids, err := t.encodeModel(text, threshold, fromEnd, o.MaxTokens)
	if err != nil {
		return Encoding{}, err
	}
	if limit >= 0 && len(ids) > limit {
		if fromEnd {
			ids = ids[len(ids)-limit:]
		} else {
			ids = ids[:limit]
		}
	}
	if t.post != nil {
		ids = t.post.process(ids, o.AddSpecialTokens)
	}
	enc := Encoding{IDs: ids}
	n := len(ids)
	target := n
	if p := o.Padding; p != nil {
		target = max(n, p.Target(n))
	}
	enc.Mask = make([]uint8, target)
	if target > n {
		padded := make([]uint32, target)
		off := 0
		if o.Padding.Left {
			off = target - n
		}
		for i := range padded {
			padded[i] = o.Padding.PadID
		}
		copy(padded[off:], ids)
		for i := off; i < off+n; i++ {
			enc.Mask[i] = 1
		}
		enc.IDs = padded
	} else {
		for i := range enc.Mask {
			enc.Mask[i] = 1
		}
	}
	return enc, nil
}

func invalidUTF8(s string) error {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			return fmt.Errorf("%w: not UTF-8 at byte %d", ErrText, i)
		}
		i += n
	}
	return fmt.Errorf("%w: not UTF-8", ErrText)
}

// encodeModel returns the model's ids for text before truncation and post-processing.
// With threshold >= 0 (truncation to that many tokens, special tokens included), tokenization
// stops as tokenizers' tokenize_with_limit does: after the first pre-token, in text order
// (from the end if fromEnd), that brings the count to threshold; the truncated result is
// the same as without the early stop. maxTokens > 0 bounds the count (ErrLimit).
func (t *Tokenizer) encodeModel(text string, threshold int, fromEnd bool, maxTokens int) ([]uint32, error) {
	if text == "" {
		return nil, nil
	}
	// Added tokens on the original text, then the normalizer and the normalized added tokens
	// on each piece between them, then the pre-tokenizer on the rest.
	var units []unit
	for _, s := range t.added.raw.split(text, nil) {
		if s.tok != nil {
			units = append(units, unit{tok: s.tok})
			continue
		}
		n := s.text
		if t.normalizer != nil {
			n = t.normalizer.normalize(n)
		}
		for _, s2 := range t.added.norm.split(n, nil) {
			units = t.appendUnits(units, s2)
		}
	}
	var out []uint32
	var err error
	total := 0
	step := func(u unit) (stop bool, err error) {
		if u.tok != nil {
			out = append(out, u.tok.id)
			total++
			return false, nil
		}
		before := len(out)
		if out, err = t.model.tokenize(out, u.piece, t.pre != nil); err != nil {
			return true, err
		}
		total += len(out) - before
		if maxTokens > 0 && total > maxTokens {
			return true, tooMany(maxTokens)
		}
		return threshold >= 0 && total >= threshold, nil
	}
	if !fromEnd {
		for _, u := range units {
			if stop, err := step(u); err != nil || stop {
				return out, err
			}
		}
		return out, nil
	}
	// From the end: ids are appended in reverse piece order, then pieces are put back.
	var bounds []int
	for k := len(units) - 1; k >= 0; k-- {
		bounds = append(bounds, len(out))
		stop, e := step(units[k])
		if e != nil {
			return nil, e
		}
		if stop {
			break
		}
	}
	bounds = append(bounds, len(out))
	res := make([]uint32, 0, len(out))
	for k := len(bounds) - 1; k > 0; k-- {
		res = append(res, out[bounds[k-1]:bounds[k]]...)
	}
	return res, err
}

func tooMany(n int) error {
	return fmt.Errorf("%w: the text gives more than %d tokens (max_tokens)", ErrLimit, n)
}

// unit is one step of the model: an added token, or a pre-token for the model (raw bytes
// that the model reads as byte-level characters when there is a ByteLevel pre-tokenizer).
type unit struct {
	tok   *addedToken
	piece string
}

func (t *Tokenizer) appendUnits(units []unit, s segment) []unit {
	if s.tok != nil {
		return append(units, unit{tok: s.tok})
	}
	if s.text == "" {
		return units
	}
	if t.pre == nil {
		return append(units, unit{piece: s.text})
	}
	str, pieces := t.pre.split(s.text, nil)
	for _, p := range pieces {
		units = append(units, unit{piece: str[p[0]:p[1]]})
	}
	return units
}

package xformgraph

import (
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/newtricks/newtricks/xformgraph/tokenize"
)

// Text ops: tokenize (UTF-8 bytes -> tokens, with a Hugging Face tokenizer.json, see package
// tokenize), token_ids and attention_mask (tokens -> int tensors). A tokens value as a graph
// output is its ids as an int32 tensor.

// Limits of the text ops.
const (
	MaxSeqLen            = 1 << 20 // max_length
	DefaultMaxTokens     = 1 << 20 // max_tokens default: 4 MiB of int32 ids
	MaxMaxTokens         = 1 << 26
	DefaultMaxTextBytes  = 8 << 20
	tokenizerCacheLength = 4 // parsed tokenizers kept per process (a large one is tens of MB)
)

func init() {
	Register(OpDef{
		Name: "tokenize",
		Doc:  "tokenizes UTF-8 text with a Hugging Face tokenizer.json (byte-level BPE), ids bit-identical to the tokenizers library; truncation, padding, one row per document or packing into rows",
		In:   []Kind{KindBytes}, Out: KindTokens,
		Params: []ParamSpec{
			{Name: "tokenizer", Type: ParamString, Required: true, Doc: "the tokenizer.json itself (parsed once per process, cached by SHA-256)"},
			{Name: "tokenizer_sha256", Type: ParamString, Doc: "hex SHA-256 the tokenizer must have (optional pin)"},
			{Name: "input", Type: ParamString, Enum: []string{"text", "lines", "jsonl"}, Default: "text", Doc: "text: the sample is one document; lines: one per non-empty line; jsonl: one per JSON line, its string field"},
			{Name: "field", Type: ParamString, Default: "text", Doc: "jsonl: the field holding the text"},
			{Name: "add_special_tokens", Type: ParamBool, Default: true, Doc: "the post-processor's special tokens (BOS/EOS template, ...), per document"},
			{Name: "max_length", Type: ParamInt, Min: 1, Max: MaxSeqLen, Doc: "length of truncation, of max_length padding and of packed rows; default: the tokenizer.json's truncation max_length, else its fixed padding length"},
			{Name: "truncation", Type: ParamString, Enum: []string{"none", "right", "left"}, Doc: "default: the tokenizer.json's truncation section"},
			{Name: "padding", Type: ParamString, Enum: []string{"none", "max_length"}, Doc: "default: the tokenizer.json's padding section"},
			{Name: "padding_side", Type: ParamString, Enum: []string{"right", "left"}, Doc: "default: the tokenizer.json's, else right"},
			{Name: "pad_to_multiple_of", Type: ParamInt, Min: 1, Max: MaxSeqLen, Doc: "default: the tokenizer.json's"},
			{Name: "pad_id", Type: ParamInt, Min: 0, Max: tokenize.MaxID, Doc: "default: the tokenizer.json's padding pad_id"},
			{Name: "pack", Type: ParamBool, Default: false, Doc: "concatenate the sample's documents (sep_token after each) and cut into rows of max_length; a last partial row is padded if padding is on, else dropped"},
			{Name: "sep_token", Type: ParamString, Doc: "pack: the token appended after each document (e.g. <|endoftext|>)"},
			{Name: "max_tokens", Type: ParamInt, Min: 1, Max: MaxMaxTokens, Default: DefaultMaxTokens, Doc: "bound on the ids of a sample (each document before truncation, and the output); beyond it the sample fails"},
			{Name: "max_text_bytes", Type: ParamInt, Min: 1, Max: 1 << 30, Default: DefaultMaxTextBytes, Doc: "bound on the sample's text"},
		},
		Infer: func(p Params, in Static) (Static, error) {
			st, err := prepareTokenize(p)
			if err != nil {
				return Static{}, err
			}
			return st.out, nil
		},
		Prepare: func(p Params) (any, error) { return prepareTokenize(p) },
		Run:     runTokenize,
	})
	Register(OpDef{
		Name: "token_ids",
		Doc:  "the ids of tokens as a tensor: layout L [length] for one sequence, NL [rows, length] for rows",
		In:   []Kind{KindTokens}, Out: KindTensor,
		Params: []ParamSpec{{Name: "dtype", Type: ParamString, Enum: []string{"int32", "int64"}, Default: "int32"}},
		Infer:  inferTokenTensor,
		Run:    runTokenTensor(false),
	})
	Register(OpDef{
		Name: "attention_mask",
		Doc:  "the attention mask of tokens (1 token, 0 padding), same shape as token_ids",
		In:   []Kind{KindTokens}, Out: KindTensor,
		Params: []ParamSpec{{Name: "dtype", Type: ParamString, Enum: []string{"int32", "int64", "uint8"}, Default: "int32"}},
		Infer:  inferTokenTensor,
		Run:    runTokenTensor(true),
	})
}

// tokenizeState is a compiled tokenize node.
type tokenizeState struct {
	tk       *tokenize.Tokenizer
	input    string
	field    string
	opts     tokenize.Options // per document (not for packing)
	pack     *tokenize.Packer // template of the packer (Length, Sep, Pad)
	rowLen   int              // fixed row length (lines/jsonl without packing), else 0
	maxToks  int
	maxText  int
	out      Static
	addSpecl bool
}

func prepareTokenize(p Params) (*tokenizeState, error) {
	js := p.String("tokenizer")
	sum := sha256.Sum256([]byte(js))
	if want := p.String("tokenizer_sha256"); want != "" && !strings.EqualFold(want, hex.EncodeToString(sum[:])) {
		return nil, fmt.Errorf("%w: tokenizer has SHA-256 %x, tokenizer_sha256 says %s", ErrBadParam, sum, want)
	}
	tk, err := cachedTokenizer(sum, js)
	if err != nil {
		return nil, err
	}
	st := &tokenizeState{tk: tk, input: p.String("input"), field: p.String("field"),
		maxToks: int(p.Int("max_tokens")), maxText: int(p.Int("max_text_bytes")), addSpecl: p.Bool("add_special_tokens")}
	st.opts.AddSpecialTokens = st.addSpecl

	// max_length: the parameter, else the file's truncation length, else its fixed padding.
	ml := 0
	switch {
	case p.Has("max_length"):
		ml = int(p.Int("max_length"))
	case tk.Truncation != nil:
		ml = tk.Truncation.MaxLength
	case tk.Padding != nil && tk.Padding.Length > 0:
		ml = tk.Padding.Length
	}
	needML := func(what string) error {
		if ml <= 0 {
			return fmt.Errorf("%w: %s needs max_length (none in the parameters or the tokenizer.json)", ErrBadParam, what)
		}
		if ml > MaxSeqLen {
			return fmt.Errorf("%w: max_length %d from the tokenizer.json, limit %d", ErrLimit, ml, MaxSeqLen)
		}
		return nil
	}
	// Truncation: the parameter, else the file's (at max_length).
	var trunc *tokenize.Truncation
	switch p.String("truncation") {
	case "right", "left":
		if err := needML("truncation"); err != nil {
			return nil, err
		}
		trunc = &tokenize.Truncation{MaxLength: ml, Left: p.String("truncation") == "left"}
	case "":
		if tk.Truncation != nil {
			c := *tk.Truncation
			c.MaxLength = ml
			trunc = &c
		}
	}
	// Padding: the parameter, else the file's; padding_side, pad_id and pad_to_multiple_of
	// override either.
	var pad *tokenize.Padding
	switch p.String("padding") {
	case "max_length":
		if err := needML("padding"); err != nil {
			return nil, err
		}
		pad = &tokenize.Padding{Length: ml}
		if fp := tk.Padding; fp != nil {
			pad.Multiple, pad.Left, pad.PadID = fp.Multiple, fp.Left, fp.PadID
		} else if !p.Has("pad_id") {
			return nil, fmt.Errorf("%w: padding needs pad_id (the tokenizer.json has no padding section)", ErrBadParam)
		}
	case "":
		if tk.Padding != nil {
			c := *tk.Padding
			if c.Length > 0 {
				c.Length = ml
			}
			pad = &c
		}
	}
	if pad != nil {
		if p.Has("padding_side") {
			pad.Left = p.String("padding_side") == "left"
		}
		if p.Has("pad_id") {
			pad.PadID = uint32(p.Int("pad_id"))
		}
		if p.Has("pad_to_multiple_of") {
			pad.Multiple = int(p.Int("pad_to_multiple_of"))
		}
		if pad.Length > MaxSeqLen || pad.Multiple > MaxSeqLen {
			return nil, fmt.Errorf("%w: padding to %d (multiple of %d), limit %d", ErrLimit, pad.Length, pad.Multiple, MaxSeqLen)
		}
	}
	nAdded := 0
	if st.addSpecl {
		nAdded = tk.SpecialTokens()
	}
	if trunc != nil && trunc.MaxLength < nAdded {
		return nil, fmt.Errorf("%w: max_length %d leaves no room for the %d special tokens", ErrBadParam, trunc.MaxLength, nAdded)
	}
	st.out = Static{Kind: KindTokens, Layout: LayoutL, Rows: 1}
	if p.Bool("pack") {
		if err := needML("pack"); err != nil {
			return nil, err
		}
		if p.String("truncation") == "right" || p.String("truncation") == "left" {
			return nil, fmt.Errorf("%w: pack cuts documents into rows: truncation must be none", ErrBadParam)
		}
		st.pack = &tokenize.Packer{Length: ml}
		if pad != nil {
			id, left := pad.PadID, pad.Left
			st.pack.Pad, st.pack.PadLeft = &id, left
		}
		if s := p.String("sep_token"); s != "" {
			id, ok := tk.TokenID(s)
			if !ok {
				return nil, fmt.Errorf("%w: sep_token %q is not in the tokenizer", ErrBadParam, s)
			}
			st.pack.Sep = &id
		}
		st.out = Static{Kind: KindTokens, Layout: LayoutNL, Len: ml, MaxBytes: 4 * (int64(st.maxToks) + int64(ml))}
		return st, nil
	}
	if p.String("sep_token") != "" {
		return nil, fmt.Errorf("%w: sep_token is for pack", ErrBadParam)
	}
	st.opts.Truncation, st.opts.Padding = trunc, pad
	st.opts.MaxTokens = st.maxToks
	// The length of every sequence when truncation and padding make it fixed.
	fixed := 0
	if trunc != nil && pad != nil && pad.Length > 0 {
		if l := pad.Target(pad.Length); trunc.MaxLength <= l {
			fixed = l
		}
	}
	if st.input != "text" {
		if fixed == 0 {
			return nil, fmt.Errorf("%w: input %s makes one row per document: rows of equal length need truncation and max_length padding (or pack)", ErrBadParam, st.input)
		}
		st.rowLen = fixed
		st.out = Static{Kind: KindTokens, Layout: LayoutNL, Len: fixed, MaxBytes: 4 * int64(max(st.maxToks, fixed))}
		return st, nil
	}
	if fixed > 0 {
		st.out.Len = fixed
		return st, nil
	}
	// Variable length: bounded by max_tokens (or the truncation) plus special tokens and
	// padding.
	n := int64(st.maxToks) + int64(nAdded)
	if trunc != nil {
		n = int64(trunc.MaxLength)
	}
	if pad != nil {
		n = max(n, int64(pad.Length))
		if pad.Multiple > 0 {
			n += int64(pad.Multiple)
		}
	}
	st.out.MaxBytes = 4 * n
	return st, nil
}

// tokenizerCache keeps the last parsed tokenizers by SHA-256 of their JSON, so that graphs
// compiled again (every session, every worker) parse a large tokenizer.json once.
var tokenizerCache = struct {
	sync.Mutex
	byHash map[[32]byte]*list.Element
	lru    *list.List // of *cachedTok, most recent first
}{byHash: map[[32]byte]*list.Element{}, lru: list.New()}

type cachedTok struct {
	sum  [32]byte
	once sync.Once
	tk   *tokenize.Tokenizer
	err  error
}

func cachedTokenizer(sum [32]byte, js string) (*tokenize.Tokenizer, error) {
	c := &tokenizerCache
	c.Lock()
	e, ok := c.byHash[sum]
	if ok {
		c.lru.MoveToFront(e)
	} else {
		e = c.lru.PushFront(&cachedTok{sum: sum})
		c.byHash[sum] = e
		for c.lru.Len() > tokenizerCacheLength {
			old := c.lru.Back()
			c.lru.Remove(old)
			delete(c.byHash, old.Value.(*cachedTok).sum)
		}
	}
	ct := e.Value.(*cachedTok)
	c.Unlock()
	ct.once.Do(func() { ct.tk, ct.err = tokenize.Load([]byte(js)) })
	if ct.err != nil {
		return nil, tokenizerError(ct.err)
	}
	return ct.tk, nil
}

func tokenizerError(err error) error {
	switch {
	case errors.Is(err, tokenize.ErrLimit):
		return fmt.Errorf("%w: tokenizer: %v", ErrLimit, err)
	case errors.Is(err, tokenize.ErrUnsupported):
		return fmt.Errorf("%w: tokenizer: %v", ErrBadParam, err)
	}
	return fmt.Errorf("%w: tokenizer: %v", ErrBadParam, err)
}

func runTokenize(ctx context.Context, env *Env, in Value) (Value, error) {
	st, ok := env.Prepared.(*tokenizeState)
	if !ok {
		return Value{}, fmt.Errorf("%w: tokenize was not compiled", ErrInvalidGraph)
	}
	data := in.Bytes
	if len(data) > st.maxText {
		return Value{}, fmt.Errorf("%w: text of %d bytes, max_text_bytes %d", ErrLimit, len(data), st.maxText)
	}
	if !utf8.Valid(data) {
		return Value{}, fmt.Errorf("%w: text is not UTF-8 (at byte %d)", ErrDecode, invalidAt(data))
	}
	docs, err := splitDocuments(data, st.input, st.field)
	if err != nil {
		return Value{}, err
	}
	tokErr := func(err error) error {
		if errors.Is(err, tokenize.ErrLimit) {
			return fmt.Errorf("%w: %v", ErrLimit, err)
		}
		return fmt.Errorf("%w: %v", ErrDecode, err)
	}
	if st.pack != nil {
		pk := *st.pack
		for i, d := range docs {
			if i%64 == 0 && ctx.Err() != nil {
				return Value{}, ctx.Err()
			}
			e, err := st.tk.Encode(d, tokenize.Options{AddSpecialTokens: st.addSpecl, MaxTokens: st.maxToks - pk.Tokens()})
			if err != nil {
				return Value{}, tokErr(err)
			}
			pk.Add(e.IDs)
			if pk.Tokens() > st.maxToks {
				return Value{}, fmt.Errorf("%w: the documents give more than %d ids (max_tokens)", ErrLimit, st.maxToks)
			}
		}
		ids, mask, rows := pk.Rows()
		if rows == 0 {
			return Value{}, fmt.Errorf("%w: %d ids do not fill one row of %d (padding is off, so the remainder is dropped)", ErrDecode, pk.Tokens(), pk.Length)
		}
		return Value{Kind: KindTokens, Tokens: &Tokens{IDs: ids, Mask: mask, Rows: rows, Len: pk.Length, Layout: LayoutNL}}, nil
	}
	if st.input == "text" {
		e, err := st.tk.Encode(docs[0], st.opts)
		if err != nil {
			return Value{}, tokErr(err)
		}
		if len(e.IDs) == 0 {
			return Value{}, fmt.Errorf("%w: the text gives no tokens (pad to max_length for a fixed-size output)", ErrDecode)
		}
		return Value{Kind: KindTokens, Tokens: &Tokens{IDs: e.IDs, Mask: e.Mask, Rows: 1, Len: len(e.IDs), Layout: LayoutL}}, nil
	}
	if len(docs) == 0 {
		return Value{}, fmt.Errorf("%w: no documents in the sample", ErrDecode)
	}
	if len(docs)*st.rowLen > st.maxToks {
		return Value{}, fmt.Errorf("%w: %d documents of %d ids exceed max_tokens %d", ErrLimit, len(docs), st.rowLen, st.maxToks)
	}
	t := &Tokens{Rows: len(docs), Len: st.rowLen, Layout: LayoutNL,
		IDs: make([]uint32, 0, len(docs)*st.rowLen), Mask: make([]uint8, 0, len(docs)*st.rowLen)}
	for i, d := range docs {
		if i%64 == 0 && ctx.Err() != nil {
			return Value{}, ctx.Err()
		}
		e, err := st.tk.Encode(d, st.opts)
		if err != nil {
			return Value{}, tokErr(err)
		}
		if len(e.IDs) != st.rowLen {
			return Value{}, fmt.Errorf("%w: document %d gives %d ids, rows are %d", ErrDecode, i, len(e.IDs), st.rowLen)
		}
		t.IDs = append(t.IDs, e.IDs...)
		t.Mask = append(t.Mask, e.Mask...)
	}
	return Value{Kind: KindTokens, Tokens: t}, nil
}

func invalidAt(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// splitDocuments returns the documents of a sample (valid UTF-8): the whole text; or its
// lines (split at "\n", one trailing "\r" removed, empty lines skipped); or, for JSON lines
// (lines that are empty or JSON whitespace skipped), each line's string field. A field that
// is missing, not a string, or holds an unpaired surrogate escape fails the sample.
func splitDocuments(data []byte, input, field string) ([]string, error) {
	if input == "text" {
		return []string{string(data)}, nil
	}
	var docs []string
	for n, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if input == "lines" {
			if len(line) > 0 {
				docs = append(docs, string(line))
			}
			continue
		}
		if len(bytes.Trim(line, " \t\r")) == 0 {
			continue
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(line, &obj); err != nil {
			return nil, fmt.Errorf("%w: line %d: not a JSON object: %v", ErrDecode, n+1, err)
		}
		raw, ok := obj[field]
		if !ok {
			return nil, fmt.Errorf("%w: line %d: no field %q", ErrDecode, n+1, field)
		}
		s, err := jsonString(raw)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: field %q: %v", ErrDecode, n+1, field, err)
		}
		docs = append(docs, s)
	}
	return docs, nil
}

// jsonString decodes a JSON string strictly: an unpaired surrogate escape (which Go would
// turn into U+FFFD, and a Python str cannot encode to UTF-8) is an error.
func jsonString(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		return "", errors.New("not a string")
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if i+1 < len(raw) && raw[i+1] == 'u' && i+6 <= len(raw) {
			v, ok := hex4(raw[i+2 : i+6])
			if ok && v >= 0xD800 && v <= 0xDBFF {
				if i+12 <= len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' {
					if w, ok := hex4(raw[i+8 : i+12]); ok && w >= 0xDC00 && w <= 0xDFFF {
						i += 11
						continue
					}
				}
				return "", errors.New("unpaired surrogate escape")
			}
			if ok && v >= 0xDC00 && v <= 0xDFFF {
				return "", errors.New("unpaired surrogate escape")
			}
			i += 5
			continue
		}
		i++ // skip the escaped character (so "\\\\u" is not an escape)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", err
	}
	return s, nil
}

func hex4(b []byte) (int, bool) {
	v := 0
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | int(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | int(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | int(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

func inferTokenTensor(p Params, in Static) (Static, error) {
	dt, _ := ParseDType(p.String("dtype"))
	out := Static{Kind: KindTensor, DType: dt, Layout: in.Layout, Rows: in.Rows, Len: in.Len}
	out.MaxBytes = in.MaxBytes / 4 * int64(dt.Size())
	return out, nil
}

func runTokenTensor(mask bool) RunFunc {
	return func(ctx context.Context, env *Env, in Value) (Value, error) {
		dt, _ := ParseDType(env.Params.String("dtype"))
		t, err := tokenTensor(in.Tokens, mask, dt)
		if err != nil {
			return Value{}, err
		}
		return Value{Kind: KindTensor, Tensor: t}, nil
	}
}

// tokenTensor lays out the ids (or the mask) of t as a tensor of dtype dt.
func tokenTensor(t *Tokens, mask bool, dt DType) (*Tensor, error) {
	if t == nil || t.Rows <= 0 || t.Len <= 0 || len(t.IDs) != t.Rows*t.Len || len(t.Mask) != len(t.IDs) {
		return nil, fmt.Errorf("%w: malformed tokens", ErrTypeMismatch)
	}
	shape := []int{t.Len}
	if t.Layout == LayoutNL {
		shape = []int{t.Rows, t.Len}
	}
	n := len(t.IDs)
	data, pooled := tensorBytes(n * dt.Size())
	for i := 0; i < n; i++ {
		v := t.IDs[i]
		if mask {
			v = uint32(t.Mask[i])
		}
		switch dt {
		case DTypeUint8:
			data[i] = byte(v)
		case DTypeInt32:
			binary.LittleEndian.PutUint32(data[4*i:], v)
		case DTypeInt64:
			binary.LittleEndian.PutUint64(data[8*i:], uint64(v))
		default:
			return nil, fmt.Errorf("%w: token tensor of %v", ErrTypeMismatch, dt)
		}
	}
	return &Tensor{DType: dt, Layout: t.Layout, Shape: shape, Data: data, pooled: pooled}, nil
}

package tokenize

import (
	"encoding/json"
	"fmt"
	"hash/maphash"
	"strings"
	"sync"
	"unicode/utf8"
)

// bpe is the BPE model of tokenizers (models/bpe/model.rs and word.rs), without dropout.
type bpe struct {
	vocab  map[string]uint32
	merges pairTable // pair (left<<32 | right) -> rank<<32 | new id
	// uniqueIDs: no two vocabulary entries share an id, so a pair's merged id identifies
	// the pair and short words can use the direct loop (see mergeSmall).
	uniqueIDs bool
	hasUnk    bool
	unk       *uint32 // unk_token's id, nil if not in the vocabulary
	unkToken  string
	prefix    string // continuing_subword_prefix
	suffix    string // end_of_word_suffix
	fuseUnk   bool
	byteFB    bool
	ignoreM   bool

	// Byte-level pieces: the id of each byte's character alone, with the prefix, the
	// suffix, or both (-1: not in the vocabulary), and the vocabulary keyed by raw bytes.
	byteSym  [4][256]int64
	rawVocab map[string]uint32

	cache wordCache
}

func parseBPE(path string, raw json.RawMessage) (*bpe, error) {
	o, err := parseObj(path, raw)
	if err != nil {
		return nil, err
	}
	if t, err := o.str("type", "BPE"); err != nil {
		return nil, err
	} else if t != "BPE" {
		return nil, fmt.Errorf("%w: %s: model %q (only BPE is supported)", ErrUnsupported, path, t)
	}
	m := &bpe{}
	var dropout *float64
	if _, err := o.decode("dropout", &dropout); err != nil {
		return nil, err
	}
	if dropout != nil && *dropout != 0 {
		return nil, fmt.Errorf("%w: %s: dropout %v (random merges are not deterministic; only null or 0)", ErrUnsupported, path, *dropout)
	}
	unk, err := o.optStr("unk_token")
	if err != nil {
		return nil, err
	}
	var prefix, suffix *string
	if prefix, err = o.optStr("continuing_subword_prefix"); err != nil {
		return nil, err
	}
	if suffix, err = o.optStr("end_of_word_suffix"); err != nil {
		return nil, err
	}
	if prefix != nil {
		m.prefix = *prefix
	}
	if suffix != nil {
		m.suffix = *suffix
	}
	if m.fuseUnk, err = o.boolean("fuse_unk", false); err != nil {
		return nil, err
	}
	if m.byteFB, err = o.boolean("byte_fallback", false); err != nil {
		return nil, err
	}
	if m.ignoreM, err = o.boolean("ignore_merges", false); err != nil {
		return nil, err
	}
	if ok, err := o.decode("vocab", &m.vocab); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("%w: %s: no vocab", ErrInvalid, path)
	}
	if len(m.vocab) > MaxVocab {
		return nil, fmt.Errorf("%w: %s: %d vocabulary entries, limit %d", ErrLimit, path, len(m.vocab), MaxVocab)
	}
	for tok, id := range m.vocab {
		if id > MaxID {
			return nil, fmt.Errorf("%w: %s: id %d of %q above %d", ErrLimit, path, id, tok, MaxID)
		}
		if !utf8.ValidString(tok) {
			return nil, fmt.Errorf("%w: %s: token %q is not UTF-8", ErrInvalid, path, tok)
		}
	}
	var mraw json.RawMessage
	if _, err := o.decode("merges", &mraw); err != nil {
		return nil, err
	}
	if err := o.done(); err != nil {
		return nil, err
	}
	if err := m.buildMerges(path, mraw); err != nil {
		return nil, err
	}
	if unk != nil {
		m.hasUnk = true
		id, ok := m.vocab[*unk]
		if !ok {
			// tokenizers loads such a file and fails to encode any text with an unknown
			// character (UnkTokenOutOfVocabulary): refused here at once.
			return nil, fmt.Errorf("%w: %s: unk_token %q is not in the vocabulary", ErrInvalid, path, *unk)
		}
		m.unk = &id
	}
	m.buildByteLevel()
	m.cache.init()
	return m, nil
}

// buildMerges reads merges, as ["a b", ...] (legacy) or [["a", "b"], ...]. As in tokenizers,
// a pair listed twice keeps its last rank.
func (m *bpe) buildMerges(path string, raw json.RawMessage) error {
	var pairs [][2]string
	if !isNull(raw) {
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return fmt.Errorf("%w: %s.merges: %v", ErrInvalid, path, err)
		}
		if len(list) > MaxMerges {
			return fmt.Errorf("%w: %s: %d merges, limit %d", ErrLimit, path, len(list), MaxMerges)
		}
		pairs = make([][2]string, 0, len(list))
		for i, e := range list {
			var s string
			if json.Unmarshal(e, &s) == nil {
				if i == 0 && strings.HasPrefix(s, "#version") {
					continue
				}
				a, b, ok := strings.Cut(s, " ")
				if !ok || strings.Contains(b, " ") {
					return fmt.Errorf("%w: %s.merges[%d]: %q is not \"a b\"", ErrInvalid, path, i, s)
				}
				pairs = append(pairs, [2]string{a, b})
				continue
			}
			var p []string
			if err := json.Unmarshal(e, &p); err != nil || len(p) != 2 {
				return fmt.Errorf("%w: %s.merges[%d]: want \"a b\" or [\"a\", \"b\"]", ErrInvalid, path, i)
			}
			pairs = append(pairs, [2]string{p[0], p[1]})
		}
	}
	m.merges.init(len(pairs))
	for rank, p := range pairs {
		a, ok1 := m.vocab[p[0]]
		b, ok2 := m.vocab[p[1]]
		if !ok1 || !ok2 {
			return fmt.Errorf("%w: %s: merge %d (%q, %q) uses a token not in the vocabulary", ErrInvalid, path, rank, p[0], p[1])
		}
		if len(p[1]) < len(m.prefix) {
			return fmt.Errorf("%w: %s: merge %d: %q is shorter than continuing_subword_prefix", ErrInvalid, path, rank, p[1])
		}
		n, ok := m.vocab[p[0]+p[1][len(m.prefix):]]
		if !ok {
			return fmt.Errorf("%w: %s: merge %d (%q, %q) makes a token not in the vocabulary", ErrInvalid, path, rank, p[0], p[1])
		}
		m.merges.put(uint64(a)<<32|uint64(b), uint64(rank)<<32|uint64(n))
	}
	ids := make(map[uint32]struct{}, len(m.vocab))
	for _, id := range m.vocab {
		ids[id] = struct{}{}
	}
	m.uniqueIDs = len(ids) == len(m.vocab)
	return nil
}

// pairTable is an open-addressing hash map from a symbol pair to its merge (rank<<32 |
// new id): the innermost lookup of BPE, faster than a Go map.
type pairTable struct {
	keys  []uint64 // emptyPair where unused
	vals  []uint64
	shift uint
}

const emptyPair = ^uint64(0) // ids are below 2^31

func (t *pairTable) init(n int) {
	size := 16
	for size < 2*n {
		size <<= 1
	}
	t.keys = make([]uint64, size)
	t.vals = make([]uint64, size)
	for i := range t.keys {
		t.keys[i] = emptyPair
	}
	t.shift = 64 - uint(bitsLen(size-1))
}

func bitsLen(x int) int {
	n := 0
	for ; x > 0; x >>= 1 {
		n++
	}
	return n
}

func (t *pairTable) slot(k uint64) int { return int((k * 0x9E3779B97F4A7C15) >> t.shift) }

// put inserts or replaces (a pair listed again keeps its last rank, as in tokenizers).
func (t *pairTable) put(k, v uint64) {
	mask := len(t.keys) - 1
	for i := t.slot(k); ; i = (i + 1) & mask {
		if t.keys[i] == emptyPair || t.keys[i] == k {
			t.keys[i], t.vals[i] = k, v
			return
		}
	}
}

func (t *pairTable) get(a, b uint32) (uint64, bool) {
	k := uint64(a)<<32 | uint64(b)
	mask := len(t.keys) - 1
	for i := t.slot(k); ; i = (i + 1) & mask {
		switch t.keys[i] {
		case k:
			return t.vals[i], true
		case emptyPair:
			return 0, false
		}
	}
}

func (m *bpe) buildByteLevel() {
	for b := 0; b < 256; b++ {
		c := string(byteChar[b])
		for v, key := range []string{c, m.prefix + c, c + m.suffix, m.prefix + c + m.suffix} {
			m.byteSym[v][b] = -1
			if id, ok := m.vocab[key]; ok {
				m.byteSym[v][b] = int64(id)
			}
		}
	}
	if m.ignoreM {
		m.rawVocab = map[string]uint32{}
		for tok, id := range m.vocab {
			var raw []byte
			ok := true
			for _, r := range tok {
				b, in := charByte[r]
				if !in {
					ok = false
					break
				}
				raw = append(raw, b)
			}
			if ok {
				m.rawVocab[string(raw)] = id
			}
		}
	}
}

// symbol is one symbol of a word being merged (word.rs's Symbol; only the zero-ness of len
// matters for ids, so a removed flag stands for it).
type symbol struct {
	c          uint32
	prev, next int32
	removed    bool
}

// merge is a queued pair: key = rank<<32 | position of its left symbol, so that the
// heap's order is word.rs's (lowest rank, then leftmost).
type merge struct {
	key   uint64
	newID uint32
}

// mergeHeap is a 4-ary min-heap on key (tokenizers uses a quaternary heap too; only the
// order of keys matters, and keys are distinct except for duplicates of one pair).
type mergeHeap []merge

func (h *mergeHeap) push(m merge) {
	s := append(*h, m)
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) >> 2
		if s[p].key <= m.key {
			break
		}
		s[i] = s[p]
		i = p
	}
	s[i] = m
	*h = s
}

func (h *mergeHeap) pop() merge {
	s := *h
	top := s[0]
	n := len(s) - 1
	last := s[n]
	s = s[:n]
	i := 0
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		best, bk := c, s[c].key
		end := min(c+4, n)
		for j := c + 1; j < end; j++ {
			if k := s[j].key; k < bk {
				best, bk = j, k
			}
		}
		if bk >= last.key {
			break
		}
		s[i] = s[best]
		i = best
	}
	if n > 0 {
		s[i] = last
	}
	*h = s
	return top
}

// scratch is reusable per-call memory.
type scratch struct {
	syms []symbol
	heap mergeHeap
}

var scratchPool = sync.Pool{New: func() any { return &scratch{} }}

// tokenize appends the ids of one pre-token. byteLevel says the piece is raw bytes that the
// model sees as byte-level characters (one per byte).
func (m *bpe) tokenize(out []uint32, piece string, byteLevel bool) ([]uint32, error) {
	if piece == "" {
		return out, nil
	}
	if m.ignoreM {
		v := m.vocab
		if byteLevel {
			v = m.rawVocab
		}
		if id, ok := v[piece]; ok {
			return append(out, id), nil
		}
	}
	cacheable := len(piece) < cacheMaxLen
	if cacheable {
		if ids, ok := m.cache.get(piece); ok {
			return append(out, ids...), nil
		}
	}
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	syms, err := m.buildWord(sc.syms[:0], piece, byteLevel)
	if err != nil {
		return out, err
	}
	syms = m.mergeAll(syms, &sc.heap)
	sc.syms = syms
	start := len(out)
	for i := range syms {
		if !syms[i].removed {
			out = append(out, syms[i].c)
		}
	}
	if cacheable {
		m.cache.put(piece, out[start:])
	}
	return out, nil
}

type symbols []symbol

func (w *symbols) add(c uint32) {
	s := *w
	n := int32(len(s))
	prev := int32(-1)
	if n > 0 {
		s[n-1].next = n
		prev = n - 1
	}
	*w = append(s, symbol{c: c, prev: prev, next: -1})
}

// buildWord is merge_word before merge_all: one symbol per character (with the prefix on all but
// the first and the suffix on the last), byte fallback or unk for characters not in the
// vocabulary, exactly as model.rs orders them.
func (m *bpe) buildWord(syms []symbol, piece string, byteLevel bool) ([]symbol, error) {
	w := (*symbols)(&syms)
	var unk *uint32 // pending unk (fused or not)
	n := len(piece)
	for i := 0; i < n; {
		var size int
		var sym int64 = -1
		if byteLevel {
			size = 1
			v := 0
			if i > 0 {
				v = 1
			}
			if i+1 == n {
				v |= 2
			}
			sym = m.byteSym[v][piece[i]]
		} else {
			_, size = utf8.DecodeRuneInString(piece[i:])
		}
		if sym < 0 {
			s := m.symbolString(piece, i, size, byteLevel)
			if id, ok := m.vocab[s]; ok {
				sym = int64(id)
			}
			if sym < 0 {
				if m.byteFB {
					ids, ok := m.byteFallback(s)
					if ok {
						for _, id := range ids {
							w.add(id)
						}
						i += size
						continue // as model.rs: a pending unk stays pending
					}
				}
				if m.hasUnk {
					if unk != nil && !m.fuseUnk {
						w.add(*unk)
					}
					unk = m.unk
				}
				i += size
				continue
			}
		}
		if unk != nil {
			w.add(*unk)
			unk = nil
		}
		w.add(uint32(sym))
		i += size
	}
	if unk != nil {
		w.add(*unk)
	}
	return *w, nil
}

// symbolString is the vocabulary key of the character at piece[i:i+size].
func (m *bpe) symbolString(piece string, i, size int, byteLevel bool) string {
	c := piece[i : i+size]
	if byteLevel {
		c = string(byteChar[piece[i]])
	}
	if i > 0 {
		c = m.prefix + c
	}
	if i+size == len(piece) {
		c += m.suffix
	}
	return c
}

func (m *bpe) byteFallback(s string) ([]uint32, bool) {
	ids := make([]uint32, 0, len(s))
	for i := 0; i < len(s); i++ {
		id, ok := m.vocab[fmt.Sprintf("<0x%02X>", s[i])]
		if !ok {
			return nil, false
		}
		ids = append(ids, id)
	}
	return ids, true
}

// mergeAll is word.rs's merge_all without dropout: pop the lowest (rank, position) pair,
// skip it if its left symbol was merged away, is last, or no longer forms a pair that
// merges into the same id, otherwise merge and queue the pairs the new symbol forms.
func (m *bpe) mergeAll(s []symbol, h *mergeHeap) []symbol {
	if len(s) < 2 {
		return s
	}
	if len(s) <= smallWord && m.uniqueIDs {
		return m.mergeSmall(s)
	}
	*h = (*h)[:0]
	for i := 0; i+1 < len(s); i++ {
		if v, ok := m.merges.get(s[i].c, s[i+1].c); ok {
			h.push(merge{key: v&^0xffffffff | uint64(i), newID: uint32(v)})
		}
	}
	for len(*h) > 0 {
		top := h.pop()
		pos := int32(top.key)
		cur := &s[pos]
		if cur.removed || cur.next == -1 {
			continue
		}
		nextPos := cur.next
		right := s[nextPos]
		v, ok := m.merges.get(cur.c, right.c)
		if !ok || uint32(v) != top.newID {
			continue
		}
		cur.c = top.newID
		cur.next = right.next
		s[nextPos].removed = true
		if right.next > -1 && int(right.next) < len(s) {
			s[right.next].prev = pos
		}
		if cur.prev >= 0 {
			if v, ok := m.merges.get(s[cur.prev].c, cur.c); ok {
				h.push(merge{key: v&^0xffffffff | uint64(cur.prev), newID: uint32(v)})
			}
		}
		if nx := cur.next; nx >= 0 && int(nx) < len(s) {
			if v, ok := m.merges.get(cur.c, s[nx].c); ok {
				h.push(merge{key: v&^0xffffffff | uint64(pos), newID: uint32(v)})
			}
		}
	}
	return s
}

// smallWord is the size up to which mergeSmall replaces the queue.
const smallWord = 24

// mergeSmall merges a short word by scanning for the lowest-rank adjacent pair, leftmost
// first, until none is left: what merge_all computes when the vocabulary's ids are unique
// (then a queued entry whose position still forms a pair merging into its id is the very
// pair it was queued for, so the queue always yields the lowest (rank, position) among
// the current pairs). Symbols merged away are dropped from s.
func (m *bpe) mergeSmall(s []symbol) []symbol {
	var vals [smallWord]uint64
	n := len(s)
	for i := 0; i+1 < n; i++ {
		v, ok := m.merges.get(s[i].c, s[i+1].c)
		if !ok {
			v = emptyPair
		}
		vals[i] = v
	}
	for {
		best := -1
		for i := 0; i+1 < n; i++ {
			if vals[i] != emptyPair && (best < 0 || vals[i]>>32 < vals[best]>>32) {
				best = i
			}
		}
		if best < 0 {
			return s[:n]
		}
		s[best].c = uint32(vals[best])
		copy(s[best+1:n], s[best+2:n])
		copy(vals[best+1:n-1], vals[best+2:n])
		n--
		if best > 0 {
			if v, ok := m.merges.get(s[best-1].c, s[best].c); ok {
				vals[best-1] = v
			} else {
				vals[best-1] = emptyPair
			}
		}
		if best+1 < n {
			if v, ok := m.merges.get(s[best].c, s[best+1].c); ok {
				vals[best] = v
			} else {
				vals[best] = emptyPair
			}
		} else {
			vals[best] = emptyPair
		}
	}
}

// wordCache maps short pre-tokens to their ids (tokenizers keeps one too; it changes no
// result). Sharded; a full shard is cleared.
const (
	cacheMaxLen    = 256
	cacheShards    = 32
	cacheShardSize = 4096
)

type wordCache struct {
	seed   maphash.Seed
	shards [cacheShards]struct {
		mu sync.RWMutex
		m  map[string][]uint32
	}
}

func (c *wordCache) init() {
	c.seed = maphash.MakeSeed()
	for i := range c.shards {
		c.shards[i].m = map[string][]uint32{}
	}
}

func (c *wordCache) shard(key string) int { return int(maphash.String(c.seed, key) % cacheShards) }

// Keys are pieces: a model sees either byte-level pieces or text pieces, never both.
func (c *wordCache) get(key string) ([]uint32, bool) {
	s := &c.shards[c.shard(key)]
	s.mu.RLock()
	ids, ok := s.m[key]
	s.mu.RUnlock()
	return ids, ok
}

func (c *wordCache) put(key string, ids []uint32) {
	s := &c.shards[c.shard(key)]
	v := append([]uint32(nil), ids...)
	s.mu.Lock()
	if len(s.m) >= cacheShardSize {
		clear(s.m)
	}
	s.m[key] = v
	s.mu.Unlock()
}

package tokenize

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// addedToken is one entry of added_tokens (tokenizer/added_vocabulary.rs).
type addedToken struct {
	id                                uint32
	content                           string
	singleWord, lstrip, rstrip, normd bool
}

// addedVocab matches added tokens before pre-tokenization, as tokenizers does: tokens with
// normalized=false against the original text, then the others against each normalized piece
// between those, leftmost-longest, non-overlapping.
type addedVocab struct {
	byContent map[string]uint32
	raw, norm *acMatcher
}

type addedTokenJSON struct {
	ID         *uint32 `json:"id"`
	Content    *string `json:"content"`
	SingleWord *bool   `json:"single_word"`
	LStrip     *bool   `json:"lstrip"`
	RStrip     *bool   `json:"rstrip"`
	Normalized *bool   `json:"normalized"`
	Special    *bool   `json:"special"`
}

// parseAddedTokens assigns ids as AddedVocabulary::add_tokens does when a tokenizer.json is
// loaded: a content already known (an earlier added token, then the model's vocabulary)
// keeps that id, others get vocab_size, vocab_size+1, ... in file order; the "id" written in
// the file is not used (tokenizers only warns when it differs).
func parseAddedTokens(raw json.RawMessage, m *bpe, n normalizer) (*addedVocab, error) {
	av := &addedVocab{byContent: map[string]uint32{}}
	if isNull(raw) {
		return av, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("%w: added_tokens: %v", ErrInvalid, err)
	}
	if len(list) > MaxAddedTokens {
		return nil, fmt.Errorf("%w: %d added tokens, limit %d", ErrLimit, len(list), MaxAddedTokens)
	}
	byID := map[uint32]*addedToken{}
	nextID := uint32(len(m.vocab))
	for i, e := range list {
		path := fmt.Sprintf("added_tokens[%d]", i)
		o, err := parseObj(path, e)
		if err != nil {
			return nil, err
		}
		var j addedTokenJSON
		for _, f := range []struct {
			k string
			v any
		}{{"id", &j.ID}, {"content", &j.Content}, {"single_word", &j.SingleWord}, {"lstrip", &j.LStrip},
			{"rstrip", &j.RStrip}, {"normalized", &j.Normalized}, {"special", &j.Special}} {
			if _, err := o.decode(f.k, f.v); err != nil {
				return nil, err
			}
		}
		if err := o.done(); err != nil {
			return nil, err
		}
		if j.Content == nil || j.SingleWord == nil || j.LStrip == nil || j.RStrip == nil || j.Normalized == nil || j.Special == nil {
			return nil, fmt.Errorf("%w: %s: content, single_word, lstrip, rstrip, normalized and special are required", ErrInvalid, path)
		}
		t := &addedToken{content: *j.Content, singleWord: *j.SingleWord, lstrip: *j.LStrip, rstrip: *j.RStrip, normd: *j.Normalized}
		if t.content == "" {
			continue // ignored, as by add_tokens
		}
		if len(t.content) > MaxAddedTokenBytes || !utf8.ValidString(t.content) {
			return nil, fmt.Errorf("%w: %s: content of %d bytes (limit %d) or not UTF-8", ErrLimit, path, len(t.content), MaxAddedTokenBytes)
		}
		if id, ok := av.byContent[t.content]; ok {
			t.id = id
		} else if id, ok := m.vocab[t.content]; ok {
			t.id = id
		} else {
			t.id = nextID
			nextID++
		}
		if t.id > MaxID {
			return nil, fmt.Errorf("%w: %s: id %d above %d", ErrLimit, path, t.id, MaxID)
		}
		av.byContent[t.content] = t.id
		byID[t.id] = t
	}
	// The matchers are built from the id -> token map, as refresh_added_tokens does.
	ids := make([]uint32, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(a, b int) bool { return ids[a] < ids[b] })
	var rawPats, normPats []acPattern
	total := 0
	for _, id := range ids {
		t := byID[id]
		p := t.content
		if t.normd && n != nil {
			p = n.normalize(p)
		}
		total += len(p)
		if p == "" {
			return nil, fmt.Errorf("%w: added token %q normalizes to the empty string", ErrInvalid, t.content)
		}
		if t.normd {
			normPats = append(normPats, acPattern{p, t})
		} else {
			rawPats = append(rawPats, acPattern{p, t})
		}
	}
	if total > MaxAddedBytes {
		return nil, fmt.Errorf("%w: added tokens of %d bytes in all, limit %d", ErrLimit, total, MaxAddedBytes)
	}
	var err error
	if av.raw, err = newACMatcher(rawPats); err != nil {
		return nil, err
	}
	if av.norm, err = newACMatcher(normPats); err != nil {
		return nil, err
	}
	return av, nil
}

// segment is a piece of text: an added token (tok != nil) or text still to process.
type segment struct {
	text string
	tok  *addedToken
}

// split appends the segments of s, find_matches of added_vocabulary.rs: matches that break
// a single_word token's word boundary are dropped, lstrip/rstrip widen a match over the
// whitespace beside it.
func (ac *acMatcher) split(s string, out []segment) []segment {
	if ac == nil || s == "" {
		if s != "" {
			out = append(out, segment{text: s})
		}
		return out
	}
	startOffset := 0
	for _, mt := range ac.find(s) {
		start, stop, t := mt.start, mt.start+len(mt.p.pat), mt.p.tok
		if t.singleWord {
			startSpace := start == 0 || !endsWithWord(s[:start])
			stopSpace := stop == len(s) || !startsWithWord(s[stop:])
			if !startSpace || !stopSpace {
				continue
			}
		}
		if t.lstrip {
			start = max(len(strings.TrimRightFunc(s[:start], isSpace)), startOffset)
		}
		if t.rstrip {
			stop += len(s[stop:]) - len(strings.TrimLeftFunc(s[stop:], isSpace))
		}
		if startOffset < start {
			out = append(out, segment{text: s[startOffset:start]})
		}
		out = append(out, segment{text: s[start:stop], tok: t})
		startOffset = stop
	}
	if startOffset < len(s) {
		out = append(out, segment{text: s[startOffset:]})
	}
	return out
}

func endsWithWord(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return s != "" && isWordChar(r)
}

func startsWithWord(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return s != "" && isWordChar(r)
}

// acMatcher finds leftmost-longest non-overlapping matches of a set of patterns (the
// daachorse automaton of tokenizers, MatchKind::LeftmostLongest) in linear time: an
// Aho-Corasick automaton of the reversed patterns, run over the text backwards, gives at
// every position the longest pattern that starts there; a forward pass then takes matches
// greedily.
type acMatcher struct {
	pats   []acPattern
	root   [256]int32
	states []acState
}

type acPattern struct {
	pat string
	tok *addedToken
}

type acState struct {
	edges []acEdge // sorted by byte
	fail  int32
	depth int32
	term  int32 // pattern completed here, -1 if none
	out   int32 // nearest state on the failure chain (itself included) completing a pattern, -1
}

type acEdge struct {
	b  byte
	to int32
}

func (s *acState) edge(b byte) int32 {
	e := s.edges
	i := sort.Search(len(e), func(i int) bool { return e[i].b >= b })
	if i < len(e) && e[i].b == b {
		return e[i].to
	}
	return -1
}

func newACMatcher(pats []acPattern) (*acMatcher, error) {
	if len(pats) == 0 {
		return nil, nil
	}
	ac := &acMatcher{pats: pats, states: []acState{{term: -1, out: -1}}}
	for pi, p := range pats {
		s := int32(0)
		for i := len(p.pat) - 1; i >= 0; i-- {
			b := p.pat[i]
			nx := ac.states[s].edge(b)
			if nx < 0 {
				nx = int32(len(ac.states))
				ac.states = append(ac.states, acState{depth: ac.states[s].depth + 1, term: -1, out: -1})
				e := append(ac.states[s].edges, acEdge{b, nx})
				sort.Slice(e, func(a, b int) bool { return e[a].b < e[b].b })
				ac.states[s].edges = e
			}
			s = nx
		}
		if ac.states[s].term >= 0 {
			return nil, fmt.Errorf("%w: added tokens %q and %q have the same pattern %q", ErrInvalid, pats[ac.states[s].term].tok.content, p.tok.content, p.pat)
		}
		ac.states[s].term = int32(pi)
	}
	// Breadth-first failure links.
	for b := range ac.root {
		ac.root[b] = 0
	}
	queue := []int32{}
	for _, e := range ac.states[0].edges {
		ac.root[e.b] = e.to
		ac.states[e.to].fail = 0
		queue = append(queue, e.to)
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		st := &ac.states[s]
		if st.term >= 0 {
			st.out = s
		} else {
			st.out = ac.states[st.fail].out
		}
		for _, e := range st.edges {
			ac.states[e.to].fail = ac.next(st.fail, e.b)
			queue = append(queue, e.to)
		}
	}
	return ac, nil
}

func (ac *acMatcher) next(s int32, b byte) int32 {
	for s != 0 {
		if nx := ac.states[s].edge(b); nx >= 0 {
			return nx
		}
		s = ac.states[s].fail
	}
	return ac.root[b]
}

type acMatch struct {
	start int
	p     *acPattern
}

func (ac *acMatcher) find(s string) []acMatch {
	var rev []acMatch // by decreasing start
	st := int32(0)
	for i := len(s) - 1; i >= 0; i-- {
		st = ac.next(st, s[i])
		if o := ac.states[st].out; o >= 0 {
			rev = append(rev, acMatch{start: i, p: &ac.pats[ac.states[o].term]})
		}
	}
	var out []acMatch
	pos := 0
	for k := len(rev) - 1; k >= 0; k-- {
		if m := rev[k]; m.start >= pos {
			out = append(out, m)
			pos = m.start + len(m.p.pat)
		}
	}
	return out
}

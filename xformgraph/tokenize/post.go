package tokenize

import (
	"encoding/json"
	"fmt"
)

// postProcessor adds special tokens around a single sequence (pairs are never encoded here).
type postProcessor interface {
	// added is the number of tokens process adds with add_special_tokens.
	added() int
	process(ids []uint32, addSpecial bool) []uint32
}

// template is TemplateProcessing's single template.
type template struct {
	pieces [][]uint32 // nil stands for the sequence ($A)
}

func (t *template) added() int {
	n := 0
	for _, p := range t.pieces {
		n += len(p)
	}
	return n
}

func (t *template) process(ids []uint32, addSpecial bool) []uint32 {
	if !addSpecial {
		return ids
	}
	out := make([]uint32, 0, len(ids)+t.added())
	for _, p := range t.pieces {
		if p == nil {
			out = append(out, ids...)
		} else {
			out = append(out, p...)
		}
	}
	return out
}

type postSeq []postProcessor

func (s postSeq) added() int {
	n := 0
	for _, p := range s {
		n += p.added()
	}
	return n
}

func (s postSeq) process(ids []uint32, addSpecial bool) []uint32 {
	for _, p := range s {
		ids = p.process(ids, addSpecial)
	}
	return ids
}

func parsePostProcessor(path string, raw json.RawMessage, depth int) (postProcessor, error) {
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
	var p postProcessor
	switch t {
	case "ByteLevel": // offsets only
		for _, k := range []string{"add_prefix_space", "trim_offsets", "use_regex"} {
			if _, err := o.boolean(k, false); err != nil {
				return nil, err
			}
		}
		p = postSeq{}
	case "TemplateProcessing":
		if p, err = parseTemplate(path, o); err != nil {
			return nil, err
		}
	case "RobertaProcessing", "BertProcessing":
		// single: cls $A sep
		var sep, cls [2]json.RawMessage
		for _, f := range []struct {
			k string
			v *[2]json.RawMessage
		}{{"sep", &sep}, {"cls", &cls}} {
			if ok, err := o.decode(f.k, f.v); err != nil || !ok {
				return nil, fmt.Errorf("%w: %s.%s: want [token, id]", ErrInvalid, path, f.k)
			}
		}
		if t == "RobertaProcessing" {
			for _, k := range []string{"trim_offsets", "add_prefix_space"} {
				if _, err := o.boolean(k, false); err != nil {
					return nil, err
				}
			}
		}
		var sid, cid uint32
		if json.Unmarshal(sep[1], &sid) != nil || json.Unmarshal(cls[1], &cid) != nil {
			return nil, fmt.Errorf("%w: %s: sep/cls ids", ErrInvalid, path)
		}
		p = &template{pieces: [][]uint32{{cid}, nil, {sid}}}
	case "Sequence":
		var list []json.RawMessage
		if _, err := o.decode("processors", &list); err != nil {
			return nil, err
		}
		seq := postSeq{}
		for i, x := range list {
			c, err := parsePostProcessor(fmt.Sprintf("%s.processors[%d]", path, i), x, depth+1)
			if err != nil {
				return nil, err
			}
			seq = append(seq, c)
		}
		p = seq
	default:
		return nil, fmt.Errorf("%w: %s: post-processor %q (supported: TemplateProcessing, ByteLevel, RobertaProcessing, BertProcessing, Sequence)", ErrUnsupported, path, t)
	}
	return p, o.done()
}

type templatePiece struct {
	Sequence *struct {
		ID     string `json:"id"`
		TypeID uint32 `json:"type_id"`
	} `json:"Sequence"`
	SpecialToken *struct {
		ID     string `json:"id"`
		TypeID uint32 `json:"type_id"`
	} `json:"SpecialToken"`
}

func parseTemplate(path string, o *jobj) (*template, error) {
	var single, pair []templatePiece
	var specials map[string]struct {
		ID     string   `json:"id"`
		IDs    []uint32 `json:"ids"`
		Tokens []string `json:"tokens"`
	}
	if _, err := o.decode("single", &single); err != nil {
		return nil, err
	}
	if _, err := o.decode("pair", &pair); err != nil {
		return nil, err
	}
	if _, err := o.decode("special_tokens", &specials); err != nil {
		return nil, err
	}
	t := &template{}
	total := 0
	for i, pc := range append(append([]templatePiece{}, single...), pair...) {
		switch {
		case pc.Sequence != nil && pc.SpecialToken == nil:
			if i < len(single) {
				if pc.Sequence.ID != "A" {
					return nil, fmt.Errorf("%w: %s: the single template uses sequence %q", ErrInvalid, path, pc.Sequence.ID)
				}
				t.pieces = append(t.pieces, nil)
			}
		case pc.SpecialToken != nil && pc.Sequence == nil:
			sp, ok := specials[pc.SpecialToken.ID]
			if !ok {
				return nil, fmt.Errorf("%w: %s: special token %q is not in special_tokens", ErrInvalid, path, pc.SpecialToken.ID)
			}
			if len(sp.IDs) != len(sp.Tokens) {
				return nil, fmt.Errorf("%w: %s: special token %q has %d ids and %d tokens", ErrInvalid, path, pc.SpecialToken.ID, len(sp.IDs), len(sp.Tokens))
			}
			if i < len(single) {
				total += len(sp.IDs)
				if total > MaxTemplateTokens {
					return nil, fmt.Errorf("%w: %s: template adds more than %d tokens", ErrLimit, path, MaxTemplateTokens)
				}
				t.pieces = append(t.pieces, append([]uint32{}, sp.IDs...))
			}
		default:
			return nil, fmt.Errorf("%w: %s: template piece %d is neither a Sequence nor a SpecialToken", ErrInvalid, path, i)
		}
	}
	seqs := 0
	for _, p := range t.pieces {
		if p == nil {
			seqs++
		}
	}
	if seqs != 1 {
		return nil, fmt.Errorf("%w: %s: the single template has %d sequences, want 1", ErrInvalid, path, seqs)
	}
	return t, nil
}

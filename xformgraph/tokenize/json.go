package tokenize

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// jobj is one JSON object of tokenizer.json being read: every key must be consumed, so a
// key this package does not know is an error naming it rather than a setting silently
// ignored.
type jobj struct {
	path string
	m    map[string]json.RawMessage
	used map[string]bool
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

func parseObj(path string, raw json.RawMessage) (*jobj, error) {
	o := &jobj{path: path, used: map[string]bool{}}
	if err := json.Unmarshal(raw, &o.m); err != nil || o.m == nil {
		return nil, fmt.Errorf("%w: %s: want an object", ErrInvalid, path)
	}
	return o, nil
}

func (o *jobj) has(key string) bool { _, ok := o.m[key]; return ok }

// raw returns the value of key (nil when absent).
func (o *jobj) raw(key string) json.RawMessage {
	o.used[key] = true
	return o.m[key]
}

func (o *jobj) decode(key string, v any) (present bool, err error) {
	raw := o.raw(key)
	if isNull(raw) {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return true, fmt.Errorf("%w: %s.%s: %v", ErrInvalid, o.path, key, err)
	}
	return true, nil
}

func (o *jobj) str(key, def string) (string, error) {
	s := def
	_, err := o.decode(key, &s)
	return s, err
}

// optStr returns nil for an absent or null key.
func (o *jobj) optStr(key string) (*string, error) {
	var s string
	ok, err := o.decode(key, &s)
	if !ok || err != nil {
		return nil, err
	}
	return &s, nil
}

func (o *jobj) boolean(key string, def bool) (bool, error) {
	b := def
	_, err := o.decode(key, &b)
	return b, err
}

func (o *jobj) typ() (string, error) {
	t, err := o.str("type", "")
	if err == nil && t == "" {
		err = fmt.Errorf("%w: %s: no \"type\" (untagged legacy components are not supported)", ErrUnsupported, o.path)
	}
	return t, err
}

// done fails on keys that were not read.
func (o *jobj) done() error {
	var extra []string
	for k := range o.m {
		if !o.used[k] {
			extra = append(extra, k)
		}
	}
	if len(extra) == 0 {
		return nil
	}
	sort.Strings(extra)
	return fmt.Errorf("%w: %s: unknown key(s) %s", ErrUnsupported, o.path, strings.Join(extra, ", "))
}

package hotspot

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// record is the durable form of one hint: one xattr "<prefix>.hint.<id>" on Config.StateDir,
// gzip-compressed JSON. It is written before any factor is changed and removed only after
// every file of the hint is restored, so a crash at any point leaves a record that recovery
// finishes (see doc.go).
type record struct {
	V        int       `json:"v"`
	ID       string    `json:"id"`
	User     string    `json:"user,omitempty"`
	Created  int64     `json:"c"`
	HotFrom  int64     `json:"from"`
	Until    int64     `json:"until"` // unix ms; restore is due at this time
	Readers  int       `json:"r"`
	Implicit bool      `json:"imp,omitempty"`
	Ended    string    `json:"end,omitempty"` // "done" or "cancelled" once the user ended it
	Files    []recFile `json:"f"`
}

type recFile struct {
	Path     string `json:"p"`
	Original int    `json:"o"`
	Target   int    `json:"t"`
	Length   int64  `json:"l"`
}

const recordVersion = 1

func encodeRecord(r *record) ([]byte, error) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err := json.NewEncoder(zw).Encode(r); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func decodeRecord(b []byte) (*record, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("hint record: %w", err)
	}
	raw, err := io.ReadAll(io.LimitReader(zr, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("hint record: %w", err)
	}
	var r record
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("hint record: %w", err)
	}
	if r.V != recordVersion {
		return nil, fmt.Errorf("hint record: version %d, want %d", r.V, recordVersion)
	}
	return &r, nil
}

// fitRecord trims r.Files until the encoded record and its xattr name fit budget bytes,
// returning the encoding and the files left out. Checkpoint shard names compress well, so a
// 16 KiB budget holds thousands of files.
func fitRecord(r *record, name string, budget int) ([]byte, []recFile, error) {
	enc, err := encodeRecord(r)
	if err != nil {
		return nil, nil, err
	}
	if len(name)+len(enc) <= budget {
		return enc, nil, nil
	}
	all := r.Files
	lo, hi := 0, len(all) // lo fits (0 files always does unless the budget is absurd), hi does not
	var best []byte
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		r.Files = all[:mid]
		e, err := encodeRecord(r)
		if err != nil {
			return nil, nil, err
		}
		if len(name)+len(e) <= budget {
			lo, best = mid, e
		} else {
			hi = mid
		}
	}
	r.Files = all[:lo]
	if best == nil {
		if best, err = encodeRecord(r); err != nil {
			return nil, nil, err
		}
	}
	return best, all[lo:], nil
}

// marker is the xattr "<prefix>" on a boosted file: its true original factor and the first
// hint that raised it. It lets an admin see why a file has an odd factor (hdfs dfs -getfattr)
// and lets recovery keep the true original if the registry and the file disagree.
type marker struct {
	Original int    `json:"o"`
	Hint     string `json:"h"`
}

// limitsState is the xattr "<prefix>.limits" on StateDir while NameNode limits are boosted:
// the keys being raised and their values before. A key listed in Keys but missing from Old
// (crash between Reconfigure and this write) is restored to the NameNode default.
type limitsState struct {
	Keys []string          `json:"keys"`
	Old  map[string]string `json:"old"`
}

func (c Config) markerName() string { return c.XAttrPrefix }
func (c Config) limitsName() string { return c.XAttrPrefix + ".limits" }
func (c Config) hintName(id string) string {
	return c.XAttrPrefix + ".hint." + id
}

// hintIDFromName returns the hint id of a registry xattr name, or "".
func (c Config) hintIDFromName(name string) string {
	p := c.XAttrPrefix + ".hint."
	if strings.HasPrefix(name, p) {
		return name[len(p):]
	}
	return ""
}

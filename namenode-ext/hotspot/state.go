package hotspot

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// record is the durable form of one hint: one xattr "<prefix>.hint.<id>" on Config.StateDir.
// It names the hint's files by inode id (so a renamed file is still found) with this hint's
// target, and is written before any factor changes and removed only after every file was let
// go. What a file's factor was and which hints hold it is in the file's own marker; the record
// is how recovery finds the files (see doc.go).
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
	Files    []recFile `json:"-"`
}

// recFile is one file of a record: its inode id and this hint's target factor.
type recFile struct {
	ID     int64
	Target int
}

const recordVersion = 2

// recordMagic starts an encoded record: "NTH" and the version byte.
var recordMagic = []byte{'N', 'T', 'H', recordVersion}

// encodeRecord writes magic, then gzip of: uvarint header length, the header as JSON, uvarint
// file count, the ids sorted and delta-encoded as uvarints, then the targets as uvarints.
// Checkpoint shards are created together, so their ids are close: 10,000 files take a few KiB.
func encodeRecord(r *record) ([]byte, error) {
	files := append([]recFile(nil), r.Files...)
	sort.Slice(files, func(i, j int) bool { return files[i].ID < files[j].ID })
	hdr, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	var raw bytes.Buffer
	var tmp [binary.MaxVarintLen64]byte
	put := func(v uint64) { raw.Write(tmp[:binary.PutUvarint(tmp[:], v)]) }
	put(uint64(len(hdr)))
	raw.Write(hdr)
	put(uint64(len(files)))
	prev := int64(0)
	for _, f := range files {
		if f.ID <= prev {
			return nil, fmt.Errorf("hint record: file id %d not above %d (ids must be positive and distinct)", f.ID, prev)
		}
		put(uint64(f.ID - prev))
		prev = f.ID
	}
	for _, f := range files {
		put(uint64(f.Target))
	}
	var buf bytes.Buffer
	buf.Write(recordMagic)
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := zw.Write(raw.Bytes()); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// errRecordVersion marks a record this version cannot read (reported, left in place).
var errRecordVersion = errors.New("unsupported hint record version")

func decodeRecord(b []byte) (*record, error) {
	if len(b) < len(recordMagic) || !bytes.Equal(b[:3], recordMagic[:3]) {
		return nil, fmt.Errorf("hint record: %w (no NTH header; written by an older namenode-ext?)", errRecordVersion)
	}
	if b[3] != recordVersion {
		return nil, fmt.Errorf("hint record: %w %d, want %d", errRecordVersion, b[3], recordVersion)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b[len(recordMagic):]))
	if err != nil {
		return nil, fmt.Errorf("hint record: %w", err)
	}
	br := bufio.NewReader(io.LimitReader(zr, 64<<20))
	get := func(what string) (uint64, error) {
		v, err := binary.ReadUvarint(br)
		if err != nil {
			return 0, fmt.Errorf("hint record: %s: %w", what, err)
		}
		return v, nil
	}
	n, err := get("header length")
	if err != nil {
		return nil, err
	}
	if n > 1<<20 {
		return nil, fmt.Errorf("hint record: header of %d bytes", n)
	}
	hdr := make([]byte, n)
	if _, err := io.ReadFull(br, hdr); err != nil {
		return nil, fmt.Errorf("hint record: header: %w", err)
	}
	var r record
	if err := json.Unmarshal(hdr, &r); err != nil {
		return nil, fmt.Errorf("hint record: %w", err)
	}
	if r.V != recordVersion {
		return nil, fmt.Errorf("hint record: %w %d in header", errRecordVersion, r.V)
	}
	count, err := get("file count")
	if err != nil {
		return nil, err
	}
	if count > 1<<24 {
		return nil, fmt.Errorf("hint record: %d files", count)
	}
	r.Files = make([]recFile, count)
	id := int64(0)
	for i := range r.Files {
		d, err := get("file id")
		if err != nil {
			return nil, err
		}
		id += int64(d)
		r.Files[i].ID = id
	}
	for i := range r.Files {
		t, err := get("target")
		if err != nil {
			return nil, err
		}
		r.Files[i].Target = int(t)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, fmt.Errorf("hint record: trailing data")
	}
	return &r, nil
}

// fitRecord trims r.Files until the encoded record and its xattr name fit budget bytes,
// returning the encoding and the files left out.
func fitRecord(r *record, name string, budget int) ([]byte, []recFile, error) {
	enc, err := encodeRecord(r)
	if err != nil {
		return nil, nil, err
	}
	if len(name)+len(enc) <= budget {
		return enc, nil, nil
	}
	all := r.Files
	lo, hi := 0, len(all) // lo fits, hi does not
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

// marker is the xattr "<prefix>" on a file held by at least one hint, and the source of truth
// for that file: its factor before any hint (O), the factor this manager last set (A), and the
// target of every hint holding it (H). While a change is in flight, P is the factor before it:
// a crash between writing the marker and the factor change leaves the factor at P, which
// recovery then knows as its own. Any other factor was set by someone else and is left alone.
type marker struct {
	O int            `json:"o"`
	A int            `json:"a"`
	P int            `json:"p,omitempty"`
	H map[string]int `json:"h"`
}

func encodeMarker(mk marker) []byte {
	b, _ := json.Marshal(mk)
	return b
}

func decodeMarker(b []byte) (marker, error) {
	var mk marker
	if err := json.Unmarshal(b, &mk); err != nil {
		return marker{}, fmt.Errorf("file marker: %w", err)
	}
	if mk.O < 1 || mk.A < 1 || mk.P < 0 {
		return marker{}, fmt.Errorf("file marker: factors o=%d a=%d p=%d out of range (older format?)", mk.O, mk.A, mk.P)
	}
	return mk, nil
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

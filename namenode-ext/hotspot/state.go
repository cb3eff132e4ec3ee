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

// recFile is one file of a record: its inode id, this hint's target factor and the file's
// factor before any hint (Original; 0 in records of version 2, which did not hold it). The
// record is on StateDir, which only the service writes: recovery checks every file's marker
// (on the file, writable by whoever may write the file) against it.
type recFile struct {
	ID       int64
	Target   int
	Original int
}

const recordVersion = 3

// maxFactor bounds every factor in a record or marker (HDFS keeps replication in a short).
const maxFactor = 32767

// Decode bounds: a record or marker larger than these is refused before anything is
// allocated for it (a record is one xattr: 32 KiB at most in HDFS).
const (
	maxRecordBytes   = 64 << 10
	maxRecordHeader  = 64 << 10
	maxMarkerBytes   = 16 << 10
	maxMarkerHints   = 64
	minRecordFileCap = 10000
)

// recordMagic starts an encoded record: "NTH" and the version byte.
var recordMagic = []byte{'N', 'T', 'H', recordVersion}

// encodeRecord writes magic, then gzip of: uvarint header length, the header as JSON, uvarint
// file count, the ids sorted and delta-encoded as uvarints, then the targets as uvarints, then
// (since version 3) the originals as uvarints.
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
	for _, f := range files {
		put(uint64(f.Original))
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

// decodeRecord decodes a record of at most maxFiles files (at least minRecordFileCap). Every
// size is checked before it is allocated: the input (maxRecordBytes), the header
// (maxRecordHeader), the file count, and the decompressed stream (what that count can take),
// so a small gzip cannot expand into a large allocation.
func decodeRecord(b []byte, maxFiles int) (*record, error) {
	maxFiles = max(maxFiles, minRecordFileCap)
	if len(b) > maxRecordBytes {
		return nil, fmt.Errorf("hint record: %d bytes, more than %d", len(b), maxRecordBytes)
	}
	if len(b) < len(recordMagic) || !bytes.Equal(b[:3], recordMagic[:3]) {
		return nil, fmt.Errorf("hint record: %w (no NTH header; written by an older namenode-ext?)", errRecordVersion)
	}
	ver := b[3]
	if ver != recordVersion && ver != 2 {
		return nil, fmt.Errorf("hint record: %w %d, want %d", errRecordVersion, ver, recordVersion)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b[len(recordMagic):]))
	if err != nil {
		return nil, fmt.Errorf("hint record: %w", err)
	}
	// Header, count, then at most three uvarints of 10 bytes per file, and one byte to find
	// trailing data.
	br := bufio.NewReader(io.LimitReader(zr, int64(maxRecordHeader+2*binary.MaxVarintLen64+3*binary.MaxVarintLen64*maxFiles+1)))
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
	if n > maxRecordHeader {
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
	if r.V != int(ver) {
		return nil, fmt.Errorf("hint record: %w %d in header", errRecordVersion, r.V)
	}
	r.V = recordVersion // rewritten (extend, done) in the current format
	count, err := get("file count")
	if err != nil {
		return nil, err
	}
	if count > uint64(maxFiles) {
		return nil, fmt.Errorf("hint record: %d files, more than %d (newtricks.hotspot.max-files)", count, maxFiles)
	}
	r.Files = make([]recFile, count)
	id := int64(0)
	for i := range r.Files {
		d, err := get("file id")
		if err != nil {
			return nil, err
		}
		if d == 0 || d > 1<<62 || id > 1<<62 {
			return nil, fmt.Errorf("hint record: file ids not increasing")
		}
		id += int64(d)
		r.Files[i].ID = id
	}
	factor := func(what string) (int, error) {
		v, err := get(what)
		if err == nil && v > maxFactor {
			err = fmt.Errorf("hint record: %s %d out of range", what, v)
		}
		return int(v), err
	}
	for i := range r.Files {
		if r.Files[i].Target, err = factor("target"); err != nil {
			return nil, err
		}
	}
	if ver >= 3 {
		for i := range r.Files {
			if r.Files[i].Original, err = factor("original"); err != nil {
				return nil, err
			}
		}
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

// decodeMarker decodes a file's marker. It is on the file, so whoever may write the file may
// have written it: it is bounded and range-checked here, and recovery checks it against the
// records (checkMarker) before it believes any of it.
func decodeMarker(b []byte) (marker, error) {
	if len(b) > maxMarkerBytes {
		return marker{}, fmt.Errorf("file marker: %d bytes, more than %d", len(b), maxMarkerBytes)
	}
	var mk marker
	if err := json.Unmarshal(b, &mk); err != nil {
		return marker{}, fmt.Errorf("file marker: %w", err)
	}
	if mk.O < 1 || mk.A < 1 || mk.P < 0 || mk.O > maxFactor || mk.A > maxFactor || mk.P > maxFactor {
		return marker{}, fmt.Errorf("file marker: factors o=%d a=%d p=%d out of range (older format?)", mk.O, mk.A, mk.P)
	}
	if len(mk.H) > maxMarkerHints {
		return marker{}, fmt.Errorf("file marker: %d hints", len(mk.H))
	}
	return mk, nil
}

// errMarkerForged marks a marker that disagrees with the records namenode-ext wrote.
var errMarkerForged = errors.New("file marker disagrees with the hint records")

// recorded is what the records on StateDir say of one file: its original factor (0: only
// records of version 2 name it, which did not hold it) and its target in each hint naming it.
type recorded struct {
	original int
	targets  map[string]int
}

// checkMarker checks a file's marker against the records. The marker says which hints hold
// the file and what its factor was before them; the records (written by namenode-ext on
// StateDir, which ordinary users cannot write) say the same, so a marker that disagrees was
// changed by someone else and nothing of it is believed. Only values from the records are
// ever set as a factor: the original (O must be the recorded one) and the targets (each of
// H's hints must name the file, with the same target). A and P are only compared with the
// file's factor (is it the one namenode-ext set?), never set. A hint in H with no record
// (known false) was let go already. For version-2 records (no original recorded) O must lie
// within [1, replMax].
func checkMarker(mk marker, rec recorded, known map[string]bool, replMax int) error {
	if rec.original > 0 && mk.O != rec.original {
		return fmt.Errorf("%w: original factor %d, recorded %d", errMarkerForged, mk.O, rec.original)
	}
	if rec.original == 0 && mk.O > replMax {
		return fmt.Errorf("%w: original factor %d above %d", errMarkerForged, mk.O, replMax)
	}
	for hid, t := range mk.H {
		if !known[hid] {
			continue
		}
		want, ok := rec.targets[hid]
		if !ok {
			return fmt.Errorf("%w: hint %s does not hold this file", errMarkerForged, hid)
		}
		if t != want {
			return fmt.Errorf("%w: target %d for hint %s, recorded %d", errMarkerForged, t, hid, want)
		}
	}
	return nil
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

package hotspot

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// A small record claiming millions of files is refused before anything is allocated for them
// (before: up to 2^24 files, ~400 MB, from a few bytes of gzip), and one of a few files past
// its end decodes no further than what its count can take.
func TestDecodeRecordBounded(t *testing.T) {
	raw := func(count uint64, tail []byte) []byte {
		var b bytes.Buffer
		var tmp [binary.MaxVarintLen64]byte
		hdr := []byte(`{"v":3,"id":"x","c":1,"from":1,"until":2,"r":1}`)
		b.Write(tmp[:binary.PutUvarint(tmp[:], uint64(len(hdr)))])
		b.Write(hdr)
		b.Write(tmp[:binary.PutUvarint(tmp[:], count)])
		b.Write(tail)
		var out bytes.Buffer
		out.Write(recordMagic)
		zw := gzip.NewWriter(&out)
		zw.Write(b.Bytes())
		zw.Close()
		return out.Bytes()
	}
	if _, err := decodeRecord(raw(1<<24, nil), 10000); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("2^24 files: %v", err)
	}
	// Megabytes of zeros behind a count of 1: the stream is cut at what one file can take.
	if _, err := decodeRecord(raw(1, bytes.Repeat([]byte{1, 3, 3}, 1)), 10000); err != nil {
		t.Fatalf("one file: %v", err)
	}
	if _, err := decodeRecord(raw(1, append([]byte{1, 3, 3}, make([]byte, 8<<20)...)), 10000); err == nil {
		t.Fatal("trailing megabytes accepted")
	}
	// Ids must increase, factors stay within HDFS's short.
	if _, err := decodeRecord(raw(2, []byte{1, 0, 3, 3, 3, 3}), 10000); err == nil {
		t.Fatal("repeated id accepted")
	}
	if _, err := decodeRecord(raw(1, []byte{1, 0xff, 0xff, 0x03, 3}), 10000); err == nil {
		t.Fatal("target 65535 accepted")
	}
	if _, err := decodeRecord(append(recordMagic, make([]byte, maxRecordBytes)...), 10000); err == nil {
		t.Fatal("oversized record accepted")
	}
	// A version-2 record (no originals) still decodes, with originals unknown.
	var b bytes.Buffer
	hdr := []byte(`{"v":2,"id":"x","c":0,"from":0,"until":1,"r":0}`)
	b.Write([]byte{byte(len(hdr))})
	b.Write(hdr)
	b.Write([]byte{1, 5, 6})
	var out bytes.Buffer
	out.Write([]byte{'N', 'T', 'H', 2})
	zw := gzip.NewWriter(&out)
	zw.Write(b.Bytes())
	zw.Close()
	back, err := decodeRecord(out.Bytes(), 10000)
	if err != nil || len(back.Files) != 1 || back.Files[0].Original != 0 || back.Files[0].Target != 6 {
		t.Fatalf("version 2: %+v %v", back, err)
	}
}

func TestCheckMarker(t *testing.T) {
	rec := recorded{original: 3, targets: map[string]int{"h1": 6}}
	known := map[string]bool{"h1": true, "h2": true}
	for _, c := range []struct {
		mk marker
		ok bool
	}{
		{marker{O: 3, A: 6, H: map[string]int{"h1": 6}}, true},
		{marker{O: 3, A: 6, H: map[string]int{"h1": 6, "gone": 9}}, true}, // a hint let go
		{marker{O: 4, A: 6, H: map[string]int{"h1": 6}}, false},
		{marker{O: 3, A: 6, H: map[string]int{"h1": 7}}, false},
		{marker{O: 3, A: 6, H: map[string]int{"h2": 6}}, false}, // h2 does not name the file
	} {
		if err := checkMarker(c.mk, rec, known, 512); (err == nil) != c.ok || (err != nil && !errors.Is(err, errMarkerForged)) {
			t.Errorf("%+v: %v", c.mk, err)
		}
	}
	if err := checkMarker(marker{O: 600, A: 6}, recorded{}, known, 512); err == nil {
		t.Error("version-2 original above replication-max accepted")
	}
	if _, err := decodeMarker([]byte(`{"o":40000,"a":6,"h":{}}`)); err == nil {
		t.Error("o=40000 decoded")
	}
}

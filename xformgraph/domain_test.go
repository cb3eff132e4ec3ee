package xformgraph

import (
	"errors"
	"runtime"
	"testing"
)

func TestDomain(t *testing.T) {
	d := Domain()
	if d.Xformgraph != OutputVersion || d.GOARCH != runtime.GOARCH || d.FFmpeg == "" || d.AVCodec == "" || d.SWScale == "" {
		t.Fatalf("incomplete domain %+v", d)
	}
	if runtime.GOARCH == "amd64" && d.GOAMD64 == "" {
		t.Fatal("no GOAMD64 level on amd64")
	}
	s := d.String()
	t.Log(s)
	back, err := ParseDomain(s)
	if err != nil || back != d {
		t.Fatalf("ParseDomain(%q) = %+v, %v", s, back, err)
	}
	for _, bad := range []string{"", "xformgraph=1", s + " extra=1", "xformgraph=x" + s[len("xformgraph=1"):], "ffmpeg=1" + s[len("xformgraph=1"):]} {
		if _, err := ParseDomain(bad); !errors.Is(err, ErrDomain) {
			t.Errorf("ParseDomain(%q): %v", bad, err)
		}
	}
	other := d
	other.GOAMD64 = "v3"
	if other == d || other.String() == s {
		t.Fatal("domains differing in GOAMD64 compare equal")
	}
}

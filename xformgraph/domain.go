package xformgraph

import (
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/newtricks/newtricks/xformgraph/ffmpeg"
	"github.com/newtricks/newtricks/xformgraph/jpegturbo"
)

// OutputVersion numbers what xformgraph's ops produce. It is bumped by any change that
// alters an output byte for some input (a new decoder, a different rounding), together with
// the golden digests in xformgraph/golden, so two builds with the same OutputVersion and the
// same libraries give the same bytes.
const OutputVersion = 3

// DeterminismDomain says which builds give bit-identical outputs: two processes whose
// domains are equal produce the same bytes for the same (graph, sample, epoch); across
// domains they may differ (a decoder fix in another FFmpeg release, fused multiply-adds in
// a build for another GOAMD64 level or architecture). It is comparable with ==, and its
// String form is stable and parsed back by ParseDomain. Every frame xformgraph writes
// carries it (package frame), so a reader can tell whether bytes it received came from its
// own domain.
type DeterminismDomain struct {
	// Xformgraph is OutputVersion.
	Xformgraph int
	// FFmpeg is the FFmpeg release (av_version_info); AVCodec, AVFormat, AVUtil and
	// SWScale the library versions actually loaded.
	FFmpeg, AVCodec, AVFormat, AVUtil, SWScale string
	// LibJPEGTurbo is the libjpeg-turbo release that decodes JPEG.
	LibJPEGTurbo string
	// GOARCH is the Go architecture of the build; GOAMD64 its amd64 level (v1..v4), empty
	// on other architectures. The Makefile pins GOAMD64=v1; the pixel code is also written so
	// that no level fuses a multiply-add (tested for v1-v4 by xformgraph/golden), but the
	// level stays in the domain so that a difference would show.
	GOARCH, GOAMD64 string
}

// domainKeys are the String fields in order.
var domainKeys = []string{"xformgraph", "ffmpeg", "avcodec", "avformat", "avutil", "swscale", "libjpeg-turbo", "goarch", "goamd64"}

// strings are the string fields in domainKeys order (after xformgraph).
func (d *DeterminismDomain) strings() []*string {
	return []*string{&d.FFmpeg, &d.AVCodec, &d.AVFormat, &d.AVUtil, &d.SWScale, &d.LibJPEGTurbo, &d.GOARCH, &d.GOAMD64}
}

// String is "xformgraph=3 ffmpeg=5.1.9-0+deb12u1 avcodec=59.37.100 ... libjpeg-turbo=2.1.5
// goarch=amd64 goamd64=v1": space-separated key=value pairs in a fixed order (values never contain
// spaces; an empty value stays as "key=").
func (d DeterminismDomain) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "xformgraph=%d", d.Xformgraph)
	for i, f := range d.strings() {
		fmt.Fprintf(&b, " %s=%s", domainKeys[i+1], strings.ReplaceAll(*f, " ", "_"))
	}
	return b.String()
}

// ParseDomain parses DeterminismDomain.String output. Keys it does not know are an error,
// so that a reader never treats a domain with more components as its own.
func ParseDomain(s string) (DeterminismDomain, error) {
	var d DeterminismDomain
	parts := strings.Fields(s)
	if len(parts) != len(domainKeys) {
		return d, fmt.Errorf("%w: determinism domain %q: want %d fields", ErrDomain, s, len(domainKeys))
	}
	ptrs := d.strings()
	for i, p := range parts {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k != domainKeys[i] {
			return d, fmt.Errorf("%w: determinism domain %q: field %d is %q, want %s=", ErrDomain, s, i, p, domainKeys[i])
		}
		if i == 0 {
			if _, err := fmt.Sscanf(v, "%d", &d.Xformgraph); err != nil {
				return d, fmt.Errorf("%w: determinism domain %q: xformgraph=%q", ErrDomain, s, v)
			}
			continue
		}
		*ptrs[i-1] = v
	}
	return d, nil
}

var domain = sync.OnceValue(func() DeterminismDomain {
	v := ffmpeg.LibraryVersions()
	return DeterminismDomain{
		Xformgraph: OutputVersion,
		FFmpeg:     v.FFmpeg, AVCodec: v.AVCodec, AVFormat: v.AVFormat, AVUtil: v.AVUtil, SWScale: v.SWScale,
		LibJPEGTurbo: jpegturbo.Version(),
		GOARCH:       runtime.GOARCH, GOAMD64: goamd64,
	}
})

var domainString = sync.OnceValue(func() string { return domain().String() })

// Domain is the determinism domain of this process.
func Domain() DeterminismDomain { return domain() }

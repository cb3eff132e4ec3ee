package ffmpeg

// #include "helpers.h"
// #include <libavutil/cpu.h>
import "C"

import "fmt"

// Versions are the FFmpeg libraries this process runs with (read from the loaded
// libraries, not the headers it was built against): part of xformgraph's determinism
// domain, since a decoder or scaler fix in another release may change pixels.
type Versions struct {
	// FFmpeg is av_version_info(): the release, with the distribution's suffix
	// ("5.1.9-0+deb12u1"). The library versions below do not move with point releases.
	FFmpeg string
	// AVCodec, AVFormat, AVUtil and SWScale are "major.minor.micro".
	AVCodec, AVFormat, AVUtil, SWScale string
}

// LibraryVersions reports the loaded FFmpeg libraries.
func LibraryVersions() Versions {
	v := func(x C.uint) string { return fmt.Sprintf("%d.%d.%d", x>>16, (x>>8)&0xff, x&0xff) }
	return Versions{
		FFmpeg:   C.GoString(C.av_version_info()),
		AVCodec:  v(C.avcodec_version()),
		AVFormat: v(C.avformat_version()),
		AVUtil:   v(C.avutil_version()),
		SWScale:  v(C.swscale_version()),
	}
}

// ForceCPUFlags restricts the CPU features FFmpeg's run-time dispatch may use
// (av_force_cpu_flags; 0 means plain C, -1 restores detection). It only affects
// contexts created afterwards, and it is process-wide: tests use it in a child process to
// show that decoders and scalers give the same bytes with and without SIMD.
func ForceCPUFlags(flags int) { C.av_force_cpu_flags(C.int(flags)) }

// CPUFlags is the AV_CPU_FLAG_* mask FFmpeg dispatches on.
func CPUFlags() int { return int(C.av_get_cpu_flags()) }

package ffmpeg

// #cgo pkg-config: libavformat libavcodec libswscale libavutil
// #include "helpers.h"
import "C"

func init() {
	// FFmpeg logs to stderr by default; errors come back as typed Go errors instead.
	C.av_log_set_level(C.AV_LOG_QUIET)
}

// SetLogLevel changes FFmpeg's global log level (an AV_LOG_* value; -8 is quiet, 16 is
// errors, 32 is info). It exists for debugging; FFmpeg's logger is process-wide.
func SetLogLevel(level int) { C.av_log_set_level(C.int(level)) }

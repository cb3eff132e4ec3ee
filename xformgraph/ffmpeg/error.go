package ffmpeg

// #include "helpers.h"
// #include <stdlib.h>
import "C"

import (
	"errors"
	"io"
	"io/fs"
	"strconv"
	"unsafe"
)

// Error is a negative FFmpeg return code (AVERROR_*). Compare with errors.Is against the
// Err* values below.
type Error int

func fferrtag(a, b, c, d int) Error { return Error(-(a | b<<8 | c<<16 | d<<24)) }

// FFmpeg error codes that callers branch on. The values are FFmpeg's own.
var (
	ErrEOF             = fferrtag('E', 'O', 'F', ' ')  // AVERROR_EOF: end of input or of a drained decoder
	ErrAgain           = Error(-C.EAGAIN)              // AVERROR(EAGAIN): feed more input / read output first
	ErrInvalidData     = fferrtag('I', 'N', 'D', 'A')  // AVERROR_INVALIDDATA: corrupt or unrecognised data
	ErrNoMem           = Error(-C.ENOMEM)              // AVERROR(ENOMEM)
	ErrInvalidArg      = Error(-C.EINVAL)              // AVERROR(EINVAL)
	ErrNotExist        = Error(-C.ENOENT)              // AVERROR(ENOENT)
	ErrIO              = Error(-C.EIO)                 // AVERROR(EIO)
	ErrNotSupported    = Error(-C.ENOSYS)              // AVERROR(ENOSYS)
	ErrRange           = Error(-C.ERANGE)              // AVERROR(ERANGE)
	ErrExit            = fferrtag('E', 'X', 'I', 'T')  // AVERROR_EXIT: interrupted (FormatContext.Interrupt)
	ErrDecoderNotFound = fferrtag(0xF8, 'D', 'E', 'C') // AVERROR_DECODER_NOT_FOUND
	ErrDemuxerNotFound = fferrtag(0xF8, 'D', 'E', 'M') // AVERROR_DEMUXER_NOT_FOUND
	ErrStreamNotFound  = fferrtag(0xF8, 'S', 'T', 'R') // AVERROR_STREAM_NOT_FOUND
	ErrPatchWelcome    = fferrtag('P', 'A', 'W', 'E')  // AVERROR_PATCHWELCOME: valid but unimplemented feature
	ErrBug             = fferrtag('B', 'U', 'G', '!')  // AVERROR_BUG
	ErrExternal        = fferrtag('E', 'X', 'T', ' ')  // AVERROR_EXTERNAL
	ErrUnknown         = fferrtag('U', 'N', 'K', 'N')  // AVERROR_UNKNOWN
	// ErrFormatRefused is newtricks' own code: the input's container is not on the open's
	// allow-list (InputOptions.Formats).
	ErrFormatRefused = fferrtag('N', 'T', 'F', 'R')
)

// Error returns FFmpeg's description (av_strerror) and the numeric code.
func (e Error) Error() string {
	if e == ErrFormatRefused {
		return "ffmpeg: container format not allowed"
	}
	const n = 128
	buf := (*C.char)(C.malloc(n))
	defer C.free(unsafe.Pointer(buf))
	if C.nt_strerror(C.int(e), buf, n) == 0 {
		return "ffmpeg: " + C.GoString(buf) + " (" + strconv.Itoa(int(e)) + ")"
	}
	return "ffmpeg: error " + strconv.Itoa(int(e))
}

// Is makes errors.Is(err, io.EOF), errors.Is(err, fs.ErrNotExist) and
// errors.Is(err, fs.ErrPermission) work for the matching FFmpeg codes.
func (e Error) Is(target error) bool {
	switch target {
	case io.EOF:
		return e == ErrEOF
	case fs.ErrNotExist:
		return e == ErrNotExist
	case fs.ErrPermission:
		return e == Error(-C.EACCES) || e == Error(-C.EPERM)
	}
	var t Error
	if errors.As(target, &t) {
		return t == e
	}
	return false
}

// newError maps a C return code to a Go error: nil for codes >= 0.
func newError(ret C.int) error {
	if ret >= 0 {
		return nil
	}
	return Error(ret)
}

// ErrClosed is returned by methods called after Close/Free.
var ErrClosed = errors.New("ffmpeg: use of closed object")

package video

import (
	"errors"
	"fmt"
)

// Sentinel errors; every *Error wraps one of them.
var (
	// ErrEmpty: the input has no bytes.
	ErrEmpty = errors.New("video: empty input")
	// ErrFormat: the container is not recognised or its headers are corrupt/truncated.
	ErrFormat = errors.New("video: unrecognised or corrupt container")
	// ErrNoVideo: the container holds no video stream.
	ErrNoVideo = errors.New("video: no video stream")
	// ErrCodec: the video codec is not one this package accepts (Options.Codecs).
	ErrCodec = errors.New("video: unsupported codec")
	// ErrTooLarge: frame dimensions exceed Options.MaxPixels (checked before decoding).
	ErrTooLarge = errors.New("video: frame too large")
	// ErrCorrupt: the stream cannot be decoded (corrupt or truncated data, no frames).
	ErrCorrupt = errors.New("video: corrupt or truncated stream")
	// ErrConcealed: a frame the sample uses was decoded from damaged data (a corrupt or
	// rejected packet since the last key frame, or a frame FFmpeg flagged after
	// concealing errors): its pixels are not the encoder's. Wraps ErrCorrupt.
	ErrConcealed = fmt.Errorf("%w: frame decoded from damaged data (errors concealed)", ErrCorrupt)
	// ErrFrameRange: a requested frame index or timestamp is outside the clip.
	ErrFrameRange = errors.New("video: frame out of range")
	// ErrLimit: the clip exceeds a configured bound (packets, frames, output).
	ErrLimit = errors.New("video: limit exceeded")
	// ErrBadIndex: a cached index does not belong to this input or cannot be parsed.
	ErrBadIndex = errors.New("video: bad index")
)

// Error names the sample and the step that failed.
type Error struct {
	Name string // the sample's name (path or key)
	Op   string // "open", "index", "decode", "sample"
	Err  error
}

func (e *Error) Error() string { return fmt.Sprintf("video %q: %s: %v", e.Name, e.Op, e.Err) }

// Unwrap returns the wrapped error.
func (e *Error) Unwrap() error { return e.Err }

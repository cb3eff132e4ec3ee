// Package ffmpeg is newtricks' narrow cgo binding over FFmpeg 5.1 (libavformat, libavcodec,
// libswscale, libavutil), and the only package in the repository that uses cgo.
//
// It follows go-astiav's shape: one Go type per C object (FormatContext, CodecContext,
// Packet, Frame, SwsContext, Image), each holding one unexported C pointer and released by an
// explicit Close or Free; constructors free whatever they allocated when they fail; FFmpeg's
// negative return codes become the typed Error, which errors.Is matches against the
// package's Err* values and against io.EOF / fs.ErrNotExist where they mean the same thing.
// No Go pointer is ever handed to C: in-memory inputs are copied once into C memory and read
// by a custom AVIOContext written in C, and pixels are scaled into C buffers and copied out.
//
// The types are not safe for concurrent use, except FormatContext.Interrupt, which may be
// called from any goroutine to abort a blocking demux call.
package ffmpeg

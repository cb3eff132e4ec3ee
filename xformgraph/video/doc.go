// Package video decodes frames from video files for training: it opens a clip from bytes
// (a whole HDFS file) or a path, builds once a keyframe/timestamp index by demuxing packets
// without decoding them, and then decodes only what a sample needs: for each wanted frame
// it seeks to the nearest preceding keyframe and decodes forward, skipping unreferenced
// frames nobody asked for, and returns RGB24 frames, resized by swscale in the same pass and
// with the stream's rotation applied.
//
// Frames are numbered in presentation order (the order of their timestamps), which is the
// order the ffmpeg CLI outputs them: frame i of a clip here is frame i of
// `ffmpeg -i clip -vf select=eq(n\,i)`, with B-frames and variable frame rate alike. The
// index (Index) is a plain value that can be serialized and cached next to the file.
//
// Every failure is an *Error naming the sample and the step, wrapping one of the package's
// sentinel errors (ErrEmpty, ErrFormat, ErrNoVideo, ErrCodec, ErrTooLarge, ErrCorrupt,
// ErrFrameRange, ErrLimit) and, where FFmpeg reported it, an ffmpeg.Error.
package video

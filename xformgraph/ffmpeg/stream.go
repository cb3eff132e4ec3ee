package ffmpeg

// #include "helpers.h"
import "C"

// MediaType is an AVMediaType.
type MediaType int

// Media types.
const (
	MediaVideo MediaType = C.AVMEDIA_TYPE_VIDEO
	MediaAudio MediaType = C.AVMEDIA_TYPE_AUDIO
)

// CodecID is an AVCodecID.
type CodecID int

// Codec ids that newtricks names explicitly.
const (
	CodecNone  CodecID = C.AV_CODEC_ID_NONE
	CodecH264  CodecID = C.AV_CODEC_ID_H264
	CodecHEVC  CodecID = C.AV_CODEC_ID_HEVC
	CodecVP8   CodecID = C.AV_CODEC_ID_VP8
	CodecVP9   CodecID = C.AV_CODEC_ID_VP9
	CodecAV1   CodecID = C.AV_CODEC_ID_AV1
	CodecMPEG4 CodecID = C.AV_CODEC_ID_MPEG4
	CodecMJPEG CodecID = C.AV_CODEC_ID_MJPEG
	CodecPNG   CodecID = C.AV_CODEC_ID_PNG
	CodecWebP  CodecID = C.AV_CODEC_ID_WEBP
)

// String is FFmpeg's codec name ("h264", "hevc"...).
func (id CodecID) String() string { return C.GoString(C.avcodec_get_name(C.enum_AVCodecID(id))) }

// Rational is an AVRational.
type Rational struct{ Num, Den int }

// Float returns Num/Den, or 0 when Den is 0.
func (r Rational) Float() float64 {
	if r.Den == 0 {
		return 0
	}
	return float64(r.Num) / float64(r.Den)
}

// NoPTS is AV_NOPTS_VALUE: "no timestamp".
const NoPTS int64 = -1 << 63

// StreamInfo is a copy of an AVStream's parameters.
type StreamInfo struct {
	Index        int
	Type         MediaType
	Codec        CodecID
	Width        int
	Height       int
	PixFmt       PixelFormat // may be PixFmtNone before FindStreamInfo
	TimeBase     Rational
	AvgFrameRate Rational
	RFrameRate   Rational
	StartTime    int64 // NoPTS if unknown, in TimeBase
	Duration     int64 // NoPTS if unknown, in TimeBase
	NumFrames    int64 // 0 if unknown (container-declared, not trusted)
	// Rotation is the display matrix's rotation in degrees counter-clockwise (as
	// av_display_rotation_get); HasRotation is false when the stream has no matrix.
	HasRotation bool
	Rotation    float64
	// Mirror is true when the display matrix also flips horizontally.
	Mirror bool
}

func streamInfo(s *C.nt_stream_info) StreamInfo {
	return StreamInfo{
		Index:        int(s.index),
		Type:         MediaType(s.media_type),
		Codec:        CodecID(s.codec_id),
		Width:        int(s.width),
		Height:       int(s.height),
		PixFmt:       PixelFormat(s.format),
		TimeBase:     Rational{int(s.tb_num), int(s.tb_den)},
		AvgFrameRate: Rational{int(s.fr_num), int(s.fr_den)},
		RFrameRate:   Rational{int(s.rfr_num), int(s.rfr_den)},
		StartTime:    int64(s.start_time),
		Duration:     int64(s.duration),
		NumFrames:    int64(s.nb_frames),
		HasRotation:  s.has_rotation != 0,
		Rotation:     float64(s.rotation),
		Mirror:       s.hflip != 0,
	}
}

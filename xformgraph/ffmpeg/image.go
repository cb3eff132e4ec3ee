package ffmpeg

// #include "helpers.h"
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// ErrLimit is wrapped by ImageDecoder.Decode when a picture exceeds its pixel limit.
var ErrLimit = errors.New("ffmpeg: picture exceeds pixel limit")

// ImageDecoder decodes still images (one packet, one picture) from memory with one reusable
// decoder. Not safe for concurrent use: one per goroutine.
type ImageDecoder struct {
	// One context per lowres level: mjpeg applies lowres only when the picture size
	// changes, so a context keeps the level it first decoded with.
	ctx     [4]*C.AVCodecContext
	id      CodecID
	threads int
	pkt     *Packet
	frm     *Frame
}

// NewImageDecoder opens a decoder by FFmpeg codec name ("mjpeg", "png", "webp").
func NewImageDecoder(codec string, threads int) (*ImageDecoder, error) {
	var id CodecID
	switch codec {
	case "mjpeg":
		id = CodecMJPEG
	case "png":
		id = CodecPNG
	case "webp":
		id = CodecWebP
	default:
		return nil, fmt.Errorf("ffmpeg: image codec %q: %w", codec, ErrDecoderNotFound)
	}
	if threads <= 0 {
		threads = 1
	}
	d := &ImageDecoder{id: id, threads: threads}
	if _, err := d.context(0); err != nil {
		return nil, err
	}
	var err error
	if d.pkt, err = NewPacket(); err != nil {
		d.Close()
		return nil, err
	}
	if d.frm, err = NewFrame(); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// Close releases the decoder. Safe to call more than once.
func (d *ImageDecoder) Close() error {
	for i := range d.ctx {
		if d.ctx[i] != nil {
			C.nt_codec_free(d.ctx[i])
			d.ctx[i] = nil
		}
	}
	if d.pkt != nil {
		d.pkt.Free()
	}
	if d.frm != nil {
		d.frm.Free()
	}
	return nil
}

// Picture is a decoded image in its native planar layout, in Go memory.
type Picture struct {
	Width, Height            int // of the decoded (possibly lowres-scaled) picture
	PixFmt                   PixelFormat
	Planes                   [4][]byte
	Strides                  [4]int
	Log2ChromaW, Log2ChromaH int
	FullRange                bool // yuvj* formats or color_range == JPEG
}

// Decode decodes the complete image in data into dst, reusing dst's plane buffers when
// they are large enough. lowres 0..3 asks for a DCT-domain downscale by 2^lowres (mjpeg).
// maxPixels > 0 rejects pictures whose coded width*height exceeds it before their buffers
// are allocated (the error wraps ErrLimit). Corrupt, truncated or empty data is an Error
// (usually ErrInvalidData); concealed decoding errors count as corrupt.
func (d *ImageDecoder) Decode(data []byte, lowres int, maxPixels int64, dst *Picture) error {
	return d.DecodeTop(data, lowres, maxPixels, 0, dst)
}

// DecodeTop is Decode that may stop after the top rows rows of a baseline (sequential
// Huffman) JPEG: the frame height in the packet's copy of the SOF marker is lowered to rows
// rounded up to 16, so the decoder entropy-decodes and transforms only the MCU rows above
// it and dst.Height is that height. Those rows are bit-identical to a full decode (a
// baseline scan is decoded strictly in MCU order and nothing above a row depends on what
// follows it). rows <= 0, rows >= the height, a file not ending with EOI, or any other JPEG
// (progressive, arithmetic, DNL) decode the whole picture; so does lowres > 0. Damage
// confined to the entropy-coded rows below the decoded ones goes unnoticed (the rows
// returned are still exactly those of the undamaged file); truncation is caught.
func (d *ImageDecoder) DecodeTop(data []byte, lowres int, maxPixels int64, rows int, dst *Picture) error {
	if d.pkt == nil || d.pkt.c == nil {
		return ErrClosed
	}
	if len(data) == 0 {
		return ErrInvalidData
	}
	if d.id == CodecMJPEG && maxPixels > 0 {
		if w, h, ok := jpegSize(data); ok && int64(w)*int64(h) > maxPixels {
			return fmt.Errorf("%w: %dx%d JPEG, limit %d pixels", ErrLimit, w, h, maxPixels)
		}
	}
	c, err := d.context(lowres)
	if err != nil {
		return err
	}
	C.av_packet_unref(d.pkt.c)
	if err := newError(C.av_new_packet(d.pkt.c, C.int(len(data)))); err != nil {
		return err
	}
	pkt := unsafe.Slice((*byte)(unsafe.Pointer(d.pkt.c.data)), len(data))
	copy(pkt, data)
	if rows > 0 && lowres == 0 && d.id == CodecMJPEG {
		// Only for a complete file (EOI last): a truncated one must still fail as a whole.
		n := len(data)
		if off, h, ok := baselineSOF(data); ok && (rows+15)&^15 < h && data[n-2] == 0xFF && data[n-1] == 0xD9 {
			rows = (rows + 15) &^ 15
			pkt[off+5], pkt[off+6] = byte(rows>>8), byte(rows)
		}
	}
	d.pkt.c.flags |= C.AV_PKT_FLAG_KEY
	ret := C.nt_image_decode(c, d.pkt.c, d.frm.c, C.int(min(max(lowres, 0), 3)), C.int64_t(maxPixels))
	C.av_packet_unref(d.pkt.c)
	if ret < 0 {
		err := Error(ret)
		if maxPixels > 0 && (err == ErrInvalidArg || err == Error(-C.EPERM)) {
			// ff_set_dimensions refused the size (AVCodecContext.max_pixels).
			return fmt.Errorf("%w: %w", ErrLimit, err)
		}
		return err
	}
	defer C.av_frame_unref(d.frm.c)
	f := d.frm.c
	w, h := int(f.width), int(f.height)
	if maxPixels > 0 && int64(w)*int64(h) > maxPixels {
		return fmt.Errorf("%w: %dx%d", ErrLimit, w, h)
	}
	desc := C.av_pix_fmt_desc_get(int32(f.format))
	if desc == nil || w <= 0 || h <= 0 {
		return ErrInvalidData
	}
	*dst = Picture{Width: w, Height: h, PixFmt: PixelFormat(f.format), Planes: dst.Planes,
		Log2ChromaW: int(desc.log2_chroma_w), Log2ChromaH: int(desc.log2_chroma_h),
		FullRange: f.color_range == C.AVCOL_RANGE_JPEG || isJPEGRange(PixelFormat(f.format))}
	np := int(C.av_pix_fmt_count_planes(int32(f.format)))
	for p := 0; p < 4; p++ {
		if p >= np || f.data[p] == nil {
			dst.Planes[p], dst.Strides[p] = dst.Planes[p][:0], 0
			continue
		}
		ph := h
		if p == 1 || p == 2 {
			ph = (h + 1<<desc.log2_chroma_h - 1) >> desc.log2_chroma_h
		}
		ls := int(f.linesize[p])
		if ls <= 0 {
			return fmt.Errorf("ffmpeg: negative line size: %w", ErrNotSupported)
		}
		n := ls * ph
		if cap(dst.Planes[p]) < n {
			dst.Planes[p] = make([]byte, n)
		}
		dst.Planes[p] = dst.Planes[p][:n]
		copy(dst.Planes[p], unsafe.Slice((*byte)(unsafe.Pointer(f.data[p])), n))
		dst.Strides[p] = ls
	}
	return nil
}

// context returns the decoder for a lowres level, opening it on first use.
func (d *ImageDecoder) context(lowres int) (*C.AVCodecContext, error) {
	lowres = min(max(lowres, 0), 3)
	if d.ctx[lowres] != nil {
		return d.ctx[lowres], nil
	}
	dec, err := NewDecoder(d.id, DecoderOptions{Threads: d.threads, Lowres: lowres})
	if err != nil {
		return nil, err
	}
	// Conceal nothing: a damaged image is an error, not a grey patch.
	dec.c.err_recognition |= C.AV_EF_EXPLODE | C.AV_EF_CRCCHECK
	d.ctx[lowres] = dec.c
	return dec.c, nil
}

func isJPEGRange(p PixelFormat) bool {
	switch p {
	case PixelFormat(C.AV_PIX_FMT_YUVJ420P), PixelFormat(C.AV_PIX_FMT_YUVJ422P), PixelFormat(C.AV_PIX_FMT_YUVJ444P),
		PixelFormat(C.AV_PIX_FMT_YUVJ440P), PixelFormat(C.AV_PIX_FMT_YUVJ411P):
		return true
	}
	return false
}

// jpegSize reads the frame size from a JPEG's SOF marker without decoding.
func jpegSize(b []byte) (w, h int, ok bool) {
	off, _, ok := findSOF(b)
	if !ok {
		return 0, 0, false
	}
	return int(b[off+7])<<8 | int(b[off+8]), int(b[off+5])<<8 | int(b[off+6]), true
}

// baselineSOF finds the SOF0/SOF1 marker of a sequential Huffman JPEG: its offset and the
// frame height. ok is false for anything else (progressive, lossless, arithmetic coding, a
// height deferred to a DNL marker, a scan before the SOF).
func baselineSOF(b []byte) (off, h int, ok bool) {
	off, m, ok := findSOF(b)
	if !ok {
		return 0, 0, false
	}
	h = int(b[off+5])<<8 | int(b[off+6])
	return off, h, (m == 0xC0 || m == 0xC1) && h > 0
}

// findSOF walks a JPEG's markers up to its first start-of-frame (SOF0..SOF15 but DHT, JPG and
// DAC) and returns the marker's offset and type; at least 10 bytes follow off. ok is false
// when the walk meets a scan, a malformed segment or the end first.
func findSOF(b []byte) (off int, marker byte, ok bool) {
	if len(b) < 4 || b[0] != 0xFF || b[1] != 0xD8 {
		return 0, 0, false
	}
	for i := 2; i+9 < len(b); {
		if b[i] != 0xFF {
			return 0, 0, false
		}
		m := b[i+1]
		if m == 0xFF {
			i++
			continue
		}
		if m == 0xD8 || (m >= 0xD0 && m <= 0xD7) || m == 0x01 {
			i += 2
			continue
		}
		n := int(b[i+2])<<8 | int(b[i+3])
		if m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC {
			return i, m, true
		}
		if m == 0xDA || n < 2 {
			return 0, 0, false
		}
		i += 2 + n
	}
	return 0, 0, false
}

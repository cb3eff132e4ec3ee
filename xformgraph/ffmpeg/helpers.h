// C helpers for package ffmpeg. They exist where a macro, a union, a callback or a
// bit of pointer arithmetic is easier and safer in C than through cgo.
#ifndef NEWTRICKS_FFMPEG_HELPERS_H
#define NEWTRICKS_FFMPEG_HELPERS_H

#include <stdint.h>
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libswscale/swscale.h>
#include <libavutil/avutil.h>
#include <libavutil/display.h>
#include <libavutil/imgutils.h>
#include <libavutil/error.h>
#include <libavutil/pixdesc.h>
#include <libavutil/common.h>
#include <libavutil/avstring.h>

// nt_input is the C-side state of one opened input: the format context plus, for
// in-memory inputs, a C copy of the bytes and the custom AVIOContext reading them, and
// an interrupt flag polled by FFmpeg's blocking loops.
typedef struct nt_input {
	AVFormatContext *fmt;
	AVIOContext *pb;       // custom IO (NULL for path inputs)
	uint8_t *data;         // C copy of the input bytes (NULL for path inputs)
	int64_t size;
	int64_t pos;
	int interrupted;       // set atomically by nt_input_interrupt
	char refused[64];      // the probed demuxer a refused open found (NT_ERR_FORMAT_REFUSED)
} nt_input;

// NT_ERR_FORMAT_REFUSED: the input's container is not on the open's allow-list.
#define NT_ERR_FORMAT_REFUSED FFERRTAG('N', 'T', 'F', 'R')

nt_input *nt_input_alloc(int64_t size);
int nt_input_open(nt_input *in, const char *path, const char *format, const char *allowed,
		  int64_t probesize, int64_t analyzeduration, int format_probesize, int io_buffer);
void nt_input_interrupt(nt_input *in);
void nt_input_free(nt_input *in);

// Stream accessors.
typedef struct nt_stream_info {
	int index;
	int media_type;
	int codec_id;
	int width, height;
	int format;
	int tb_num, tb_den;
	int fr_num, fr_den;      // avg_frame_rate
	int rfr_num, rfr_den;    // r_frame_rate
	int64_t start_time, duration, nb_frames;
	int has_rotation;
	double rotation;         // av_display_rotation_get: degrees counter-clockwise
	int hflip;               // determinant of the display matrix is negative
} nt_stream_info;

// nt_stream_info_get returns stream i's parameters by value; err < 0 on a bad index.
typedef struct nt_stream_info_result { nt_stream_info info; int err; } nt_stream_info_result;
nt_stream_info_result nt_stream_info_get(AVFormatContext *fmt, int i);
void nt_discard_others(AVFormatContext *fmt, int keep);
int nt_seek_start(AVFormatContext *fmt);

// Results come back by value so that Go never hands C a pointer to Go memory.
typedef struct nt_decoder_result { AVCodecContext *c; int err; } nt_decoder_result;
nt_decoder_result nt_decoder_open(AVFormatContext *fmt, int stream, int codec_id,
		    int threads, int thread_type, int lowres, int64_t max_pixels);
void nt_codec_free(AVCodecContext *c);
void nt_frame_free(AVFrame *f);
void nt_packet_free(AVPacket *p);
int nt_strerror(int err, char *buf, size_t size);

int nt_sws_frame(struct SwsContext *sws, const AVFrame *src, uint8_t *dst, int dst_stride);
void nt_sws_colorspace(struct SwsContext *sws, int colorspace, int src_range);
int nt_frame_rotate(const AVFrame *src, AVFrame *dst, int deg);

// nt_yuv2rgb holds the 16-bit coefficients of libswscale's unscaled YUV->RGB converter
// (ff_yuv2rgb_c_init_tables: yCoeff, yOffset, vrCoeff, ubCoeff, ugCoeff, vgCoeff).
typedef struct nt_yuv2rgb { int16_t y, yoff, vr, ub, ug, vg; } nt_yuv2rgb;
int nt_matrix(int colorspace);
nt_yuv2rgb nt_yuv2rgb_init(int colorspace, int full_range);
int nt_yuv2rgb24(const AVFrame *src, uint8_t *dst, int dst_stride, nt_yuv2rgb k);
#endif

// Still-image decoding: one packet in, one frame out.
int nt_image_decode(AVCodecContext *c, AVPacket *pkt, AVFrame *frm, int lowres, int64_t max_pixels);

#include "helpers.h"
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

static int nt_read(void *opaque, uint8_t *buf, int size) {
	nt_input *in = opaque;
	int64_t left = in->size - in->pos;
	if (left <= 0) return AVERROR_EOF;
	if (size > left) size = (int)left;
	memcpy(buf, in->data + in->pos, size);
	in->pos += size;
	return size;
}

static int64_t nt_seek(void *opaque, int64_t off, int whence) {
	nt_input *in = opaque;
	int64_t np;
	whence &= ~AVSEEK_FORCE;
	switch (whence) {
	case AVSEEK_SIZE: return in->size;
	case SEEK_SET: np = off; break;
	case SEEK_CUR: np = in->pos + off; break;
	case SEEK_END: np = in->size + off; break;
	default: return AVERROR(EINVAL);
	}
	if (np < 0 || np > in->size) return AVERROR(EINVAL);
	in->pos = np;
	return np;
}

static int nt_interrupt_cb(void *opaque) {
	nt_input *in = opaque;
	return __atomic_load_n(&in->interrupted, __ATOMIC_RELAXED);
}

nt_input *nt_input_alloc(int64_t size) {
	nt_input *in = av_mallocz(sizeof(*in));
	if (!in) return NULL;
	if (size > 0) {
		in->data = av_malloc(size);
		if (!in->data) { av_free(in); return NULL; }
		in->size = size;
	}
	return in;
}

// nt_refuse_io_open is the io_open of an in-memory input: the input is exactly the bytes
// handed over, so any further open a demuxer asks for (a playlist's segment, a concat list's
// file, an image sequence's next picture, a mov data reference) is refused.
static int nt_refuse_io_open(AVFormatContext *s, AVIOContext **pb, const char *url,
			     int flags, AVDictionary **options) {
	(void)s; (void)pb; (void)url; (void)flags; (void)options;
	return AVERROR(EPERM);
}

// nt_allowed reports whether demuxer ifmt (its name is a comma-separated list of aliases,
// "mov,mp4,m4a,3gp,3g2,mj2") is on the comma-separated allow-list; NULL allows any.
static int nt_allowed(const AVInputFormat *ifmt, const char *allowed) {
	return !allowed || av_match_list(ifmt->name, allowed, ',') > 0;
}

static int nt_refuse(nt_input *in, const AVInputFormat *ifmt) {
	av_strlcpy(in->refused, ifmt->name, sizeof(in->refused));
	return NT_ERR_FORMAT_REFUSED;
}

int nt_input_open(nt_input *in, const char *path, const char *format, const char *allowed,
		  int64_t probesize, int64_t analyzeduration, int format_probesize, int io_buffer) {
	const AVInputFormat *ifmt = NULL;
	if (format && format[0]) {
		ifmt = av_find_input_format(format);
		if (!ifmt) return AVERROR_DEMUXER_NOT_FOUND;
		if (!nt_allowed(ifmt, allowed)) return nt_refuse(in, ifmt);
	}
	AVFormatContext *fmt = avformat_alloc_context();
	if (!fmt) return AVERROR(ENOMEM);
	// FFmpeg's own checks behind ours: demuxers and protocols a nested open may use.
	if (allowed && !(fmt->format_whitelist = av_strdup(allowed))) {
		avformat_free_context(fmt);
		return AVERROR(ENOMEM);
	}
	if (!(fmt->protocol_whitelist = av_strdup(path ? "file" : ""))) {
		avformat_free_context(fmt);
		return AVERROR(ENOMEM);
	}
	fmt->interrupt_callback.callback = nt_interrupt_cb;
	fmt->interrupt_callback.opaque = in;
	if (probesize > 0) fmt->probesize = probesize;
	if (analyzeduration > 0) fmt->max_analyze_duration = analyzeduration;
	if (format_probesize > 0) fmt->format_probesize = format_probesize;
	if (!path) {
		uint8_t *buf = av_malloc(io_buffer);
		if (!buf) { avformat_free_context(fmt); return AVERROR(ENOMEM); }
		in->pb = avio_alloc_context(buf, io_buffer, 0, in, nt_read, NULL, nt_seek);
		if (!in->pb) { av_free(buf); avformat_free_context(fmt); return AVERROR(ENOMEM); }
		fmt->pb = in->pb;
		fmt->flags |= AVFMT_FLAG_CUSTOM_IO;
		fmt->io_open = nt_refuse_io_open;
		if (!ifmt) {
			// Probe here, as avformat_open_input would, to name a refused container.
			int ret = av_probe_input_buffer2(in->pb, &ifmt, "", fmt, 0, fmt->format_probesize);
			if (ret < 0) { avformat_free_context(fmt); return ret; }
			if (!nt_allowed(ifmt, allowed)) { avformat_free_context(fmt); return nt_refuse(in, ifmt); }
		}
	}
	// On failure avformat_open_input frees fmt and sets it to NULL.
	int ret = avformat_open_input(&fmt, path ? path : "", ifmt, NULL);
	if (ret < 0) return ret;
	in->fmt = fmt;
	return 0;
}

void nt_input_interrupt(nt_input *in) {
	__atomic_store_n(&in->interrupted, 1, __ATOMIC_RELAXED);
}

void nt_input_free(nt_input *in) {
	if (!in) return;
	if (in->fmt) avformat_close_input(&in->fmt);
	if (in->pb) {
		av_freep(&in->pb->buffer);
		avio_context_free(&in->pb);
	}
	av_freep(&in->data);
	av_free(in);
}

nt_stream_info_result nt_stream_info_get(AVFormatContext *fmt, int i) {
	nt_stream_info_result res;
	memset(&res, 0, sizeof(res));
	if (i < 0 || (unsigned)i >= fmt->nb_streams) { res.err = AVERROR(EINVAL); return res; }
	nt_stream_info *o = &res.info;
	AVStream *st = fmt->streams[i];
	AVCodecParameters *par = st->codecpar;
	o->index = i;
	o->media_type = par->codec_type;
	o->codec_id = par->codec_id;
	o->width = par->width;
	o->height = par->height;
	o->format = par->format;
	o->tb_num = st->time_base.num;
	o->tb_den = st->time_base.den;
	o->fr_num = st->avg_frame_rate.num;
	o->fr_den = st->avg_frame_rate.den;
	o->rfr_num = st->r_frame_rate.num;
	o->rfr_den = st->r_frame_rate.den;
	o->start_time = st->start_time;
	o->duration = st->duration;
	o->nb_frames = st->nb_frames;
	size_t sz = 0;
	const int32_t *m = (const int32_t *)av_stream_get_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, &sz);
	if (m && sz >= 9 * sizeof(int32_t)) {
		double r = av_display_rotation_get(m);
		if (r == r) { // not NaN
			o->has_rotation = 1;
			o->rotation = r;
			// det of the 2x2 part < 0 means a mirror.
			int64_t det = (int64_t)m[0] * m[4] - (int64_t)m[1] * m[3];
			o->hflip = det < 0;
		}
	}
	return res;
}

void nt_discard_others(AVFormatContext *fmt, int keep) {
	for (unsigned i = 0; i < fmt->nb_streams; i++)
		fmt->streams[i]->discard = ((int)i == keep) ? AVDISCARD_DEFAULT : AVDISCARD_ALL;
}

static int decoder_open(AVCodecContext **out, AVFormatContext *fmt, int stream, int codec_id,
		    int threads, int thread_type, int lowres, int64_t max_pixels) {
	*out = NULL;
	AVCodecParameters *par = NULL;
	if (fmt) {
		if (stream < 0 || (unsigned)stream >= fmt->nb_streams) return AVERROR_STREAM_NOT_FOUND;
		par = fmt->streams[stream]->codecpar;
		codec_id = par->codec_id;
	}
	const AVCodec *codec = avcodec_find_decoder(codec_id);
	if (!codec) return AVERROR_DECODER_NOT_FOUND;
	AVCodecContext *c = avcodec_alloc_context3(codec);
	if (!c) return AVERROR(ENOMEM);
	int ret = 0;
	if (par) {
		ret = avcodec_parameters_to_context(c, par);
		if (ret < 0) { avcodec_free_context(&c); return ret; }
		c->pkt_timebase = fmt->streams[stream]->time_base;
	}
	c->thread_count = threads;
	if (thread_type) c->thread_type = thread_type;
	if (lowres > 0) {
		if (lowres > codec->max_lowres) lowres = codec->max_lowres;
		c->lowres = lowres;
	}
	if (max_pixels > 0) c->max_pixels = max_pixels;
	/* Bit-exact DSP choices only: the same bytes whatever SIMD the CPU has. */
	c->flags |= AV_CODEC_FLAG_BITEXACT;
	ret = avcodec_open2(c, codec, NULL);
	if (ret < 0) { avcodec_free_context(&c); return ret; }
	*out = c;
	return 0;
}

nt_decoder_result nt_decoder_open(AVFormatContext *fmt, int stream, int codec_id,
		    int threads, int thread_type, int lowres, int64_t max_pixels) {
	nt_decoder_result r;
	r.err = decoder_open(&r.c, fmt, stream, codec_id, threads, thread_type, lowres, max_pixels);
	return r;
}

void nt_codec_free(AVCodecContext *c) { avcodec_free_context(&c); }
void nt_frame_free(AVFrame *f) { av_frame_free(&f); }
void nt_packet_free(AVPacket *p) { av_packet_free(&p); }
int nt_strerror(int err, char *buf, size_t size) { return av_strerror(err, buf, size); }

void nt_sws_colorspace(struct SwsContext *sws, int colorspace, int src_range) {
	// Same choice as libavfilter's scale filter with in_color_matrix=auto: the frame's
	// matrix (nt_matrix), full-range RGB out.
	const int *inv = sws_getCoefficients(nt_matrix(colorspace));
	const int *tab = sws_getCoefficients(SWS_CS_DEFAULT);
	sws_setColorspaceDetails(sws, inv, src_range, tab, 1, 0, 1 << 16, 1 << 16);
}

int nt_sws_frame(struct SwsContext *sws, const AVFrame *src, uint8_t *dst, int dst_stride) {
	uint8_t *dd[4] = {dst, NULL, NULL, NULL};
	int ds[4] = {dst_stride, 0, 0, 0};
	return sws_scale(sws, (const uint8_t *const *)src->data, src->linesize, 0, src->height, dd, ds);
}

// nt_frame_rotate writes src turned clockwise by deg (90, 180, 270) into dst, for planar
// formats of 8- or 16-bit samples whose chroma subsampling is the same on both axes
// (transposing 4:2:2 would change the format). Like the ffmpeg CLI's transpose filter, it
// works on YUV before any scaling.
int nt_frame_rotate(const AVFrame *src, AVFrame *dst, int deg) {
	const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(src->format);
	if (!d || (d->flags & (AV_PIX_FMT_FLAG_BITSTREAM | AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_HWACCEL)))
		return AVERROR(ENOSYS);
	if (d->nb_components > 1 && !(d->flags & AV_PIX_FMT_FLAG_PLANAR))
		return AVERROR(ENOSYS);
	if (deg != 180 && d->log2_chroma_w != d->log2_chroma_h)
		return AVERROR(ENOSYS);
	if (deg != 90 && deg != 180 && deg != 270)
		return AVERROR(EINVAL);
	int bps = d->comp[0].depth > 8 ? 2 : 1;
	for (int i = 0; i < d->nb_components; i++)
		if (d->comp[i].step != bps) return AVERROR(ENOSYS);
	av_frame_unref(dst);
	dst->format = src->format;
	dst->width = deg == 180 ? src->width : src->height;
	dst->height = deg == 180 ? src->height : src->width;
	int ret = av_frame_get_buffer(dst, 0);
	if (ret < 0) return ret;
	ret = av_frame_copy_props(dst, src);
	if (ret < 0) return ret;
	int planes = av_pix_fmt_count_planes(src->format);
	for (int p = 0; p < planes; p++) {
		int pw = src->width, ph = src->height;
		if (p == 1 || p == 2) {
			pw = AV_CEIL_RSHIFT(pw, d->log2_chroma_w);
			ph = AV_CEIL_RSHIFT(ph, d->log2_chroma_h);
		}
		const uint8_t *s = src->data[p];
		uint8_t *o = dst->data[p];
		int ss = src->linesize[p], ds = dst->linesize[p];
		if (deg == 180) {
			for (int y = 0; y < ph; y++) {
				const uint8_t *sr = s + (ph - 1 - y) * ss;
				uint8_t *dr = o + y * ds;
				if (bps == 1) for (int x = 0; x < pw; x++) dr[x] = sr[pw - 1 - x];
				else for (int x = 0; x < pw; x++) ((uint16_t *)dr)[x] = ((const uint16_t *)sr)[pw - 1 - x];
			}
			continue;
		}
		// dst is ph wide and pw high.
		for (int y = 0; y < pw; y++) {
			uint8_t *dr = o + y * ds;
			for (int x = 0; x < ph; x++) {
				int sx = deg == 90 ? y : pw - 1 - y;
				int sy = deg == 90 ? ph - 1 - x : x;
				if (bps == 1) dr[x] = s[sy * ss + sx];
				else ((uint16_t *)dr)[x] = *(const uint16_t *)(s + sy * ss + 2 * sx);
			}
		}
	}
	return 0;
}

int nt_image_decode(AVCodecContext *c, AVPacket *pkt, AVFrame *frm, int lowres, int64_t max_pixels) {
	c->max_pixels = max_pixels > 0 ? max_pixels : INT_MAX;
	av_frame_unref(frm);
	int ret = avcodec_send_packet(c, pkt);
	if (ret >= 0) ret = avcodec_receive_frame(c, frm);
	if (ret == AVERROR(EAGAIN)) {
		// A decoder holding the frame back (delay): drain it.
		ret = avcodec_send_packet(c, NULL);
		if (ret >= 0) ret = avcodec_receive_frame(c, frm);
	}
	avcodec_flush_buffers(c);
	if (ret < 0) return ret;
	if (frm->decode_error_flags || (frm->flags & AV_FRAME_FLAG_CORRUPT)) {
		av_frame_unref(frm);
		return AVERROR_INVALIDDATA;
	}
	return 0;
}

int nt_seek_start(AVFormatContext *fmt) {
	int64_t ts = fmt->start_time != AV_NOPTS_VALUE ? fmt->start_time : 0;
	int ret = avformat_seek_file(fmt, -1, INT64_MIN, ts, ts, 0);
	if (ret < 0 && fmt->iformat && !fmt->iformat->read_seek && !fmt->iformat->read_seek2)
		// Raw streams without a seek function: byte 0 is the start.
		ret = avformat_seek_file(fmt, -1, 0, 0, 0, AVSEEK_FLAG_BYTE);
	return ret;
}

// nt_matrix maps a frame's AVColorSpace to the one whose coefficients libavfilter's scale
// filter hands swscale with its default in_color_matrix=auto (parse_yuv_type in
// libavfilter/vf_scale.c): the frame's own, except RGB, YCgCo and values outside 1..10,
// which become BT.470BG (BT.601).
int nt_matrix(int colorspace) {
	if (colorspace < 1 || colorspace > 10 || colorspace == 8) return AVCOL_SPC_BT470BG;
	return colorspace;
}

// roundToInt16 of libswscale/yuv2rgb.c.
static int16_t nt_round16(int64_t f) {
	int r = (int)((f + (1 << 15)) >> 16);
	if (r < -0x7FFF) return INT16_MIN;
	if (r > 0x7FFF) return 0x7FFF;
	return (int16_t)r;
}

// nt_yuv2rgb_init computes the coefficients as ff_yuv2rgb_c_init_tables does for the
// swscale defaults (brightness 0, contrast and saturation 1<<16) and the matrix and range
// the scale filter picks (sws_getCoefficients of nt_matrix(colorspace)).
nt_yuv2rgb nt_yuv2rgb_init(int colorspace, int full_range) {
	const int *inv = sws_getCoefficients(nt_matrix(colorspace));
	const int64_t contrast = 1 << 16, saturation = 1 << 16, brightness = 0;
	int64_t crv = inv[0], cbu = inv[1], cgu = -inv[2], cgv = -inv[3];
	int64_t cy = 1 << 16, oy = 0;
	if (!full_range) {
		cy = (cy * 255) / 219;
		oy = 16 << 16;
	} else {
		crv = (crv * 224) / 255;
		cbu = (cbu * 224) / 255;
		cgu = (cgu * 224) / 255;
		cgv = (cgv * 224) / 255;
	}
	cy = (cy * contrast) >> 16;
	crv = (crv * contrast * saturation) >> 32;
	cbu = (cbu * contrast * saturation) >> 32;
	cgu = (cgu * contrast * saturation) >> 32;
	cgv = (cgv * contrast * saturation) >> 32;
	oy -= 256LL * brightness;
	nt_yuv2rgb k;
	k.y = nt_round16(cy * (1 << 13));
	k.yoff = nt_round16(oy * (1 << 3));
	k.vr = nt_round16(crv * (1 << 13));
	k.ub = nt_round16(cbu * (1 << 13));
	k.ug = nt_round16(cgu * (1 << 13));
	k.vg = nt_round16(cgv * (1 << 13));
	return k;
}

// pmulhw: the high half of a signed 16x16-bit product (an arithmetic shift, so floor).
static inline int nt_mulhi(int a, int b) { return (a * b) >> 16; }
static inline uint8_t nt_clip8(int v) { return v < 0 ? 0 : v > 255 ? 255 : (uint8_t)v; }

// nt_yuv2rgb24_px converts pixels [x0, x1) of one row (scalar).
static void nt_yuv2rgb24_px(const uint8_t *py, const uint8_t *pu, const uint8_t *pv, uint8_t *o,
			    int x0, int x1, nt_yuv2rgb k) {
	for (int x = x0; x < x1; x++) {
		int u = (pu[x >> 1] << 3) - 1024, v = (pv[x >> 1] << 3) - 1024;
		int l = nt_mulhi((py[x] << 3) - k.yoff, k.y);
		o[3 * x + 0] = nt_clip8(l + nt_mulhi(v, k.vr));
		o[3 * x + 1] = nt_clip8(l + (nt_mulhi(u, k.ug) + nt_mulhi(v, k.vg)));
		o[3 * x + 2] = nt_clip8(l + nt_mulhi(u, k.ub));
	}
}

// nt_yuv2rgb24 converts a yuv420p/yuvj420p/yuva420p/yuv422p/yuvj422p frame to packed RGB24
// of the same size with the arithmetic of libswscale's unscaled special converter on x86
// (yuv420_rgb24 in libswscale/x86/yuv_2_rgb.asm, the MMX/SSSE3 code that
// ff_yuv2rgb_get_func_ptr returns when SWS_ACCURATE_RND is not set and the height is even:
// what the ffmpeg CLI, decord and PyAV run by default), in integer code whose bytes are the
// same on every CPU: samples shifted left by 3 into 16 bits, the offsets subtracted, each
// term the high half of its signed 16-bit product (pmulhw: floor), the terms summed and the
// sum saturated to 0..255; each chroma sample serves two luma columns and (4:2:0) two rows,
// no interpolation. On x86-64 blocks of 16 pixels use SSE2, part of the x86-64 baseline (no
// run-time dispatch), with the very instructions of the reference (pmulhw, paddsw,
// packuswb); the scalar code does the rest and everything elsewhere. The two agree exactly
// (no intermediate leaves the int16 range), which TestPortableConversionMatchesSwscale checks
// for both through widths that are and are not multiples of 16.
int nt_yuv2rgb24(const AVFrame *src, uint8_t *dst, int dst_stride, nt_yuv2rgb k) {
	int vshift;
	switch (src->format) {
	case AV_PIX_FMT_YUV420P: case AV_PIX_FMT_YUVJ420P: case AV_PIX_FMT_YUVA420P: vshift = 1; break;
	case AV_PIX_FMT_YUV422P: case AV_PIX_FMT_YUVJ422P: vshift = 0; break;
	default: return AVERROR(ENOSYS);
	}
	const int w = src->width, h = src->height;
#ifdef __SSE2__
	const __m128i zero = _mm_setzero_si128(), c1024 = _mm_set1_epi16(1024);
	const __m128i yoff = _mm_set1_epi16(k.yoff), yc = _mm_set1_epi16(k.y);
	const __m128i vr = _mm_set1_epi16(k.vr), ub = _mm_set1_epi16(k.ub);
	const __m128i ug = _mm_set1_epi16(k.ug), vg = _mm_set1_epi16(k.vg);
	const int wv = w & ~15;
#else
	const int wv = 0;
#endif
	for (int y = 0; y < h; y++) {
		const uint8_t *py = src->data[0] + (ptrdiff_t)y * src->linesize[0];
		const uint8_t *pu = src->data[1] + (ptrdiff_t)(y >> vshift) * src->linesize[1];
		const uint8_t *pv = src->data[2] + (ptrdiff_t)(y >> vshift) * src->linesize[2];
		uint8_t *o = dst + (ptrdiff_t)y * dst_stride;
#ifdef __SSE2__
		for (int x = 0; x < wv; x += 16) {
			__m128i yy = _mm_loadu_si128((const __m128i *)(py + x));
			__m128i u = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(pu + x / 2)), zero);
			__m128i v = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(pv + x / 2)), zero);
			u = _mm_subs_epi16(_mm_slli_epi16(u, 3), c1024);
			v = _mm_subs_epi16(_mm_slli_epi16(v, 3), c1024);
			__m128i cr = _mm_mulhi_epi16(v, vr), cb = _mm_mulhi_epi16(u, ub);
			__m128i cg = _mm_adds_epi16(_mm_mulhi_epi16(u, ug), _mm_mulhi_epi16(v, vg));
			__m128i l0 = _mm_sub_epi16(_mm_slli_epi16(_mm_unpacklo_epi8(yy, zero), 3), yoff);
			__m128i l1 = _mm_sub_epi16(_mm_slli_epi16(_mm_unpackhi_epi8(yy, zero), 3), yoff);
			l0 = _mm_mulhi_epi16(l0, yc);
			l1 = _mm_mulhi_epi16(l1, yc);
			// Chroma term i serves pixels 2i and 2i+1.
			__m128i r = _mm_packus_epi16(_mm_adds_epi16(l0, _mm_unpacklo_epi16(cr, cr)),
						     _mm_adds_epi16(l1, _mm_unpackhi_epi16(cr, cr)));
			__m128i g = _mm_packus_epi16(_mm_adds_epi16(l0, _mm_unpacklo_epi16(cg, cg)),
						     _mm_adds_epi16(l1, _mm_unpackhi_epi16(cg, cg)));
			__m128i b = _mm_packus_epi16(_mm_adds_epi16(l0, _mm_unpacklo_epi16(cb, cb)),
						     _mm_adds_epi16(l1, _mm_unpackhi_epi16(cb, cb)));
			uint8_t rb[16], gb[16], bb[16];
			_mm_storeu_si128((__m128i *)rb, r);
			_mm_storeu_si128((__m128i *)gb, g);
			_mm_storeu_si128((__m128i *)bb, b);
			uint8_t *oo = o + 3 * x;
			for (int i = 0; i < 16; i++) {
				oo[3 * i] = rb[i];
				oo[3 * i + 1] = gb[i];
				oo[3 * i + 2] = bb[i];
			}
		}
#endif
		nt_yuv2rgb24_px(py, pu, pv, o, wv, w, k);
	}
	return 0;
}

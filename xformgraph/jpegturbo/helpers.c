#include "helpers.h"

#include <setjmp.h>
#include <stdlib.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include <jerror.h>
#include <jpeglib.h>

typedef struct {
	struct jpeg_error_mgr pub;
	jmp_buf jump;
	nt_jpeg_result *res;
} nt_err;

static void nt_error_exit(j_common_ptr c) {
	nt_err *e = (nt_err *)c->err;
	e->res->err = NT_JPEG_EFORMAT;
	switch (e->pub.msg_code) {
	case JERR_OUT_OF_MEMORY:
		e->res->err = NT_JPEG_ENOMEM;
		break;
	case JERR_NOT_COMPILED:
	case JERR_NOTIMPL:
	case JERR_BAD_PRECISION:
	case JERR_CCIR601_NOTIMPL:
		e->res->err = NT_JPEG_EUNSUPPORTED;
		break;
	case JERR_INPUT_EMPTY:
	case JERR_INPUT_EOF:
		e->res->err = NT_JPEG_ETRUNCATED;
		break;
	}
	(*c->err->format_message)(c, e->res->msg);
	longjmp(e->jump, 1);
}

/* Warnings are data errors libjpeg concealed (corrupt entropy data, a truncated file
 * padded with gray, extraneous bytes): the pixels it returns are not the encoder's, so
 * they fail the decode. Trace messages (level > 0) are ignored. */
static void nt_emit_message(j_common_ptr c, int level) {
	nt_err *e = (nt_err *)c->err;
	if (level >= 0)
		return;
	e->pub.num_warnings++;
	if (e->res->warnings++ == 0) {
		e->res->warn_code = e->pub.msg_code;
		(*c->err->format_message)(c, e->res->msg);
	}
}

static void nt_output_message(j_common_ptr c) { (void)c; }

/* Splits interleaved RGB into three planes. The SSSE3 version (16 pixels per step, byte
 * shuffles) and the scalar one give the same bytes: a copy, nothing to round. */
static void deinterleave_scalar(const unsigned char *s, unsigned char *r, unsigned char *g,
				unsigned char *b, JDIMENSION n) {
	for (JDIMENSION x = 0; x < n; x++, s += 3) {
		r[x] = s[0];
		g[x] = s[1];
		b[x] = s[2];
	}
}

#if defined(__x86_64__) || defined(__i386__)
#include <tmmintrin.h>
__attribute__((target("ssse3"))) static void deinterleave_ssse3(const unsigned char *s, unsigned char *r,
								 unsigned char *g, unsigned char *b,
								 JDIMENSION n) {
	/* For 48 bytes a, b, c holding 16 RGB pixels: channel k of pixel i is byte 3i+k. */
	const __m128i ra = _mm_setr_epi8(0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
	const __m128i rb = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, 2, 5, 8, 11, 14, -1, -1, -1, -1, -1);
	const __m128i rc = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 1, 4, 7, 10, 13);
	const __m128i ga = _mm_setr_epi8(1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
	const __m128i gb = _mm_setr_epi8(-1, -1, -1, -1, -1, 0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1);
	const __m128i gc = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 2, 5, 8, 11, 14);
	const __m128i ba = _mm_setr_epi8(2, 5, 8, 11, 14, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
	const __m128i bb = _mm_setr_epi8(-1, -1, -1, -1, -1, 1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1);
	const __m128i bc = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 3, 6, 9, 12, 15);
	JDIMENSION x = 0;
	for (; x + 16 <= n; x += 16, s += 48) {
		__m128i a = _mm_loadu_si128((const __m128i *)s);
		__m128i m = _mm_loadu_si128((const __m128i *)(s + 16));
		__m128i c = _mm_loadu_si128((const __m128i *)(s + 32));
		_mm_storeu_si128((__m128i *)(r + x), _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(a, ra), _mm_shuffle_epi8(m, rb)), _mm_shuffle_epi8(c, rc)));
		_mm_storeu_si128((__m128i *)(g + x), _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(a, ga), _mm_shuffle_epi8(m, gb)), _mm_shuffle_epi8(c, gc)));
		_mm_storeu_si128((__m128i *)(b + x), _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(a, ba), _mm_shuffle_epi8(m, bb)), _mm_shuffle_epi8(c, bc)));
	}
	deinterleave_scalar(s, r + x, g + x, b + x, n - x);
}
#endif

static void (*deinterleave)(const unsigned char *, unsigned char *, unsigned char *, unsigned char *,
			    JDIMENSION) = NULL;

static void pick_deinterleave(void) {
	deinterleave = deinterleave_scalar;
#if defined(__x86_64__) || defined(__i386__)
	const char *e = getenv("NT_JPEG_NOSSSE3");
	if (__builtin_cpu_supports("ssse3") && !(e && e[0] == '1')) deinterleave = deinterleave_ssse3;
#endif
}

int nt_jpeg_deinterleave_simd(void) {
	if (!deinterleave) pick_deinterleave();
	return deinterleave != deinterleave_scalar;
}

int nt_jpeg_version(void) { return LIBJPEG_TURBO_VERSION_NUMBER; }

void nt_jpeg_decode(const unsigned char *data, unsigned long n, const nt_jpeg_request *rq,
		    unsigned char *p0, unsigned char *p1, unsigned char *p2, long cap,
		    nt_jpeg_result *res) {
	struct jpeg_decompress_struct cinfo;
	nt_err jerr;
	/* volatile: read after a longjmp. */
	volatile int created = 0;
	JSAMPROW volatile row = NULL;

	memset(res, 0, sizeof(*res));
	if (!deinterleave) pick_deinterleave();
	cinfo.err = jpeg_std_error(&jerr.pub);
	jerr.pub.error_exit = nt_error_exit;
	jerr.pub.emit_message = nt_emit_message;
	jerr.pub.output_message = nt_output_message;
	jerr.res = res;
	if (setjmp(jerr.jump)) {
		if (row) free(row);
		if (created) jpeg_destroy_decompress(&cinfo);
		return;
	}
	jpeg_create_decompress(&cinfo);
	created = 1;
	jpeg_mem_src(&cinfo, data, n);
	jpeg_read_header(&cinfo, TRUE);
	res->width = cinfo.image_width;
	res->height = cinfo.image_height;
	res->components = cinfo.num_components;
	res->color_space = cinfo.jpeg_color_space;
	res->adobe = cinfo.saw_Adobe_marker;
	if (rq->max_pixels > 0 && (long long)cinfo.image_width * cinfo.image_height > rq->max_pixels) {
		res->err = NT_JPEG_ELIMIT;
		snprintf(res->msg, sizeof(res->msg), "%ux%u exceeds %lld pixels", cinfo.image_width,
			 cinfo.image_height, (long long)rq->max_pixels);
		jpeg_destroy_decompress(&cinfo);
		return;
	}
	int ncomp;
	switch (rq->out) {
	case NT_JPEG_OUT_GRAY:
		if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK) goto unsupported;
		cinfo.out_color_space = JCS_GRAYSCALE;
		ncomp = 1;
		break;
	case NT_JPEG_OUT_RGB:
		if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK) goto unsupported;
		cinfo.out_color_space = JCS_RGB;
		ncomp = 3;
		break;
	case NT_JPEG_OUT_CMYK:
		if (cinfo.jpeg_color_space != JCS_CMYK && cinfo.jpeg_color_space != JCS_YCCK) goto unsupported;
		cinfo.out_color_space = JCS_CMYK;
		ncomp = 4;
		break;
	default:
		goto unsupported;
	}
	cinfo.scale_num = 1;
	cinfo.scale_denom = rq->denom > 0 ? rq->denom : 1;
	/* The library's defaults, spelled out: they decide the pixels. */
	cinfo.dct_method = JDCT_ISLOW;
	cinfo.do_fancy_upsampling = TRUE;
	cinfo.do_block_smoothing = TRUE;
	cinfo.two_pass_quantize = FALSE;
	cinfo.quantize_colors = FALSE;
	jpeg_start_decompress(&cinfo);
	res->scaled_width = cinfo.output_width;
	res->scaled_height = cinfo.output_height;
	JDIMENSION x0 = 0, w = cinfo.output_width;
	JDIMENSION y0 = 0, y1 = cinfo.output_height;
	if (rq->x1 > 0) {
		if (rq->x0 < 0 || rq->x1 > (int)cinfo.output_width || rq->x0 >= rq->x1 || rq->y0 < 0 ||
		    rq->y1 > (int)cinfo.output_height || rq->y0 >= rq->y1) {
			res->err = NT_JPEG_EARG;
			snprintf(res->msg, sizeof(res->msg), "region (%d,%d)-(%d,%d) outside %ux%u", rq->x0, rq->y0,
				 rq->x1, rq->y1, cinfo.output_width, cinfo.output_height);
			jpeg_destroy_decompress(&cinfo);
			return;
		}
		x0 = rq->x0;
		w = rq->x1 - rq->x0;
		y0 = rq->y0;
		y1 = rq->y1;
		if (w < cinfo.output_width) jpeg_crop_scanline(&cinfo, &x0, &w);
	}
	res->x0 = x0;
	res->y0 = y0;
	res->w = w;
	res->h = y1 - y0;
	long plane = (ncomp == 4 ? 4L : 1L) * w * res->h;
	if (plane > cap) {
		res->err = NT_JPEG_EARG;
		snprintf(res->msg, sizeof(res->msg), "output of %ld bytes per plane, buffer of %ld", plane, cap);
		jpeg_destroy_decompress(&cinfo);
		return;
	}
	if (y0 > 0) jpeg_skip_scanlines(&cinfo, y0);
	/* The RGB row starts 1 byte past a 32-byte boundary: libjpeg-turbo 2.1's SIMD colour
	 * conversion writes an aligned output row with non-temporal stores (movntdq), which
	 * send it to memory, and the deinterleave that reads it straight back then misses the
	 * cache on every load (10% of the image pipeline's time). Misaligned, it writes the
	 * same bytes with ordinary stores. */
	row = malloc((size_t)w * ncomp + 64);
	if (!row) {
		res->err = NT_JPEG_ENOMEM;
		jpeg_destroy_decompress(&cinfo);
		return;
	}
	JSAMPROW rgb = row + (32 - ((uintptr_t)row & 31)) + 1;
	for (long y = 0; y < res->h; y++) {
		JSAMPROW r = rgb;
		if (ncomp != 3) r = p0 + y * (long)w * ncomp;
		if (jpeg_read_scanlines(&cinfo, &r, 1) != 1) {
			res->err = NT_JPEG_ETRUNCATED;
			snprintf(res->msg, sizeof(res->msg), "no scanline %ld", (long)(y0 + y));
			break;
		}
		if (ncomp == 3) deinterleave(rgb, p0 + y * (long)w, p1 + y * (long)w, p2 + y * (long)w, w);
		if (res->warnings) break;
	}
	free(row);
	row = NULL;
	if (!res->err && !res->warnings && y1 == cinfo.output_height) {
		/* The whole height: read on to EOI, which notices trailing damage (a corrupt
		 * entropy segment that ended early or late). */
		jpeg_finish_decompress(&cinfo);
	} else {
		/* Stop here: rows below the region are never decoded. */
		jpeg_abort_decompress(&cinfo);
	}
	jpeg_destroy_decompress(&cinfo);
	return;

unsupported:
	res->err = NT_JPEG_EUNSUPPORTED;
	snprintf(res->msg, sizeof(res->msg), "colour space %d with %d components to output %d",
		 cinfo.jpeg_color_space, cinfo.num_components, rq->out);
	jpeg_destroy_decompress(&cinfo);
}

#ifndef NT_JPEGTURBO_HELPERS_H
#define NT_JPEGTURBO_HELPERS_H

enum { NT_JPEG_OUT_RGB = 1, NT_JPEG_OUT_GRAY = 2, NT_JPEG_OUT_CMYK = 3 };
enum {
	NT_JPEG_OK = 0,
	NT_JPEG_EFORMAT = 1,      /* corrupt or not a JPEG */
	NT_JPEG_ETRUNCATED = 2,   /* data ends early */
	NT_JPEG_EUNSUPPORTED = 3, /* valid but not supported (12-bit, arithmetic...) */
	NT_JPEG_ELIMIT = 4,       /* pixel limit */
	NT_JPEG_ENOMEM = 5,
	NT_JPEG_EARG = 6, /* bad request */
};

typedef struct {
	int out;   /* NT_JPEG_OUT_* */
	int denom; /* DCT scaling 1/denom: 1, 2, 4 or 8 */
	/* Region of the scaled picture, [x0, x1) x [y0, y1); x1 == 0: the whole picture. */
	int x0, y0, x1, y1;
	long long max_pixels;
} nt_jpeg_request;

typedef struct {
	int err;
	int warnings, warn_code;
	char msg[200];
	int width, height, components, color_space, adobe;
	int scaled_width, scaled_height;
	/* The region decoded: x0 may lie left of the requested one (iMCU alignment). */
	int x0, y0, w, h;
} nt_jpeg_result;

int nt_jpeg_version(void);
int nt_jpeg_deinterleave_simd(void);

/* Decodes rq's region. RGB goes to three planes p0, p1, p2 (w bytes per row, packed);
 * gray to p0; CMYK interleaved to p0 (4*w bytes per row). cap is the size of each plane. */
void nt_jpeg_decode(const unsigned char *data, unsigned long n, const nt_jpeg_request *rq,
		    unsigned char *p0, unsigned char *p1, unsigned char *p2, long cap,
		    nt_jpeg_result *res);

#endif

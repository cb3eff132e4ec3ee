// Package image decodes still images (JPEG, PNG, WebP) under pixel limits and runs the
// spatial kernels of xformgraph: Pillow-compatible separable resampling (bilinear, bicubic,
// box/area, all antialiased when shrinking), crops, flips, EXIF orientation and the fused
// crop+resize+flip+normalize pass that writes a tensor straight from decoded planes. JPEG
// itself is decoded by a JPEGDecoder the caller provides (xformgraph: libjpeg-turbo).
//
// It is a leaf package (no dependency on xformgraph) so that xformgraph and
// xformgraph/video can both use its Image type.
package image

// Image is an 8-bit interleaved (HWC) image: Channels is 1 (gray), 3 (RGB) or 4 (RGBA).
// Pixel (x, y) channel c is Pix[y*Stride + x*Channels + c].
type Image struct {
	Width, Height int
	Channels      int
	Stride        int // bytes per row, >= Width*Channels
	Pix           []byte
}

// NewImage allocates a tightly packed image.
func NewImage(w, h, c int) *Image {
	return &Image{Width: w, Height: h, Channels: c, Stride: w * c, Pix: make([]byte, w*h*c)}
}

// Row returns the Width*Channels bytes of row y.
func (m *Image) Row(y int) []byte {
	o := y * m.Stride
	return m.Pix[o : o+m.Width*m.Channels]
}

// Planar is a decoded picture in planes: R, G, B at full resolution (RGB set, as the
// libjpeg-turbo JPEG decoder produces them), or YCbCr/gray as a WebP decoder produces it,
// before chroma upsampling. Cb/Cr are nil for gray. YCbCr chroma planes are subsampled by
// 2^Log2ChromaW horizontally and 2^Log2ChromaH vertically, sited at the centre of the luma
// block they cover (JPEG/JFIF convention). The planes may hold only a region of the
// picture (OffX, OffY, FullWidth, FullHeight).
type Planar struct {
	Width, Height            int
	Y, Cb, Cr                []byte
	YStride, CStride         int
	Log2ChromaW, Log2ChromaH int
	// FullRange: JFIF full-range BT.601 (JPEG). false: limited-range BT.601 (WebP lossy).
	FullRange bool
	// RGB: Y, Cb and Cr hold R, G and B at full resolution (Log2Chroma 0, CStride ==
	// YStride) and need no colour conversion (a libjpeg-turbo decode).
	RGB bool
	// OffX, OffY, FullWidth, FullHeight: the planes hold the Width x Height region at
	// (OffX, OffY) of a FullWidth x FullHeight picture (a region decode); zero FullWidth
	// or FullHeight means OffX+Width or OffY+Height.
	OffX, OffY, FullWidth, FullHeight int
	// Denom: the picture was decoded scaled by 1/Denom (0 or 1: full size); plans, made
	// for the full-size picture, scale their coordinates by FullWidth / their source width.
	Denom int
	// Owner is private to the PlanarDecoder that filled the planes (buffer recycling).
	Owner any
}

// fullWidth and fullHeight are the size of the whole picture, which plans are made for.
func (p *Planar) fullWidth() int  { return max(p.OffX+p.Width, p.FullWidth) }
func (p *Planar) fullHeight() int { return max(p.OffY+p.Height, p.FullHeight) }

// Covers reports whether p holds region r of the picture at r's scale (see JPEGRegion).
func (p *Planar) Covers(r JPEGRegion) bool {
	if max(r.Denom, 1) != max(p.Denom, 1) {
		return false
	}
	if r.X1 == 0 {
		return p.OffX == 0 && p.OffY == 0 && p.Width == p.fullWidth() && p.Height == p.fullHeight()
	}
	return p.OffX <= r.X0 && p.OffY <= r.Y0 && p.OffX+p.Width >= r.X1 && p.OffY+p.Height >= r.Y1
}

// PlanarReleaser is implemented by a PlanarDecoder that can reuse the buffers of a Planar
// it produced once the caller is done with it.
type PlanarReleaser interface {
	ReleasePlanar(p *Planar)
}

// ChromaSize is the size of the chroma planes.
func (p *Planar) ChromaSize() (int, int) {
	return (p.Width + 1<<p.Log2ChromaW - 1) >> p.Log2ChromaW, (p.Height + 1<<p.Log2ChromaH - 1) >> p.Log2ChromaH
}

// Gray reports whether p has only a luma plane.
func (p *Planar) Gray() bool { return p.Cb == nil }

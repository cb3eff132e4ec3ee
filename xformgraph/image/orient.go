package image

// Orient returns m transformed so that EXIF orientation o (2..8) becomes 1, as Pillow's
// ImageOps.exif_transpose does.
func Orient(m *Image, o int) *Image {
	w, h, c := m.Width, m.Height, m.Channels
	ow, oh := w, h
	if o >= 5 {
		ow, oh = h, w
	}
	out := NewImage(ow, oh, c)
	for y := 0; y < h; y++ {
		row := m.Row(y)
		for x := 0; x < w; x++ {
			var dx, dy int
			switch o {
			case 2:
				dx, dy = w-1-x, y
			case 3:
				dx, dy = w-1-x, h-1-y
			case 4:
				dx, dy = x, h-1-y
			case 5: // transpose
				dx, dy = y, x
			case 6: // rotate 90 CW
				dx, dy = h-1-y, x
			case 7: // transverse
				dx, dy = h-1-y, w-1-x
			case 8: // rotate 90 CCW
				dx, dy = y, w-1-x
			default:
				dx, dy = x, y
			}
			copy(out.Pix[dy*out.Stride+dx*c:dy*out.Stride+dx*c+c], row[x*c:x*c+c])
		}
	}
	return out
}

// FlipH returns m mirrored left-right.
func FlipH(m *Image) *Image {
	out := NewImage(m.Width, m.Height, m.Channels)
	c := m.Channels
	for y := 0; y < m.Height; y++ {
		src, dst := m.Row(y), out.Row(y)
		for x := 0; x < m.Width; x++ {
			copy(dst[(m.Width-1-x)*c:(m.Width-x)*c], src[x*c:x*c+c])
		}
	}
	return out
}

// Crop returns a copy of the rectangle (x, y, w, h), which must lie inside m.
func Crop(m *Image, x, y, w, h int) *Image {
	out := NewImage(w, h, m.Channels)
	for r := 0; r < h; r++ {
		copy(out.Row(r), m.Pix[(y+r)*m.Stride+x*m.Channels:])
	}
	return out
}

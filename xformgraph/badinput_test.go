package xformgraph

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/jpeg"
	"strings"
	"testing"
)

func testJPEG(t testing.TB, w, h int, progressive bool) []byte {
	src, _, err := image.Decode(bytes.NewReader(testPNG(t, w, h)))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, src, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// hugeJPEG is a JPEG header declaring 65535x65535 (4.3 Gpx) followed by nothing useful.
func hugeJPEG() []byte {
	b := []byte{0xff, 0xd8, 0xff, 0xc0, 0, 17, 8, 0xff, 0xff, 0xff, 0xff, 3,
		1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1, 0xff, 0xda, 0, 12, 3, 1, 0, 2, 0x11, 3, 0x11, 0, 63, 0}
	return append(b, make([]byte, 64)...)
}

// hugePNG is a valid PNG signature + IHDR declaring 100000x100000 RGBA.
func hugePNG() []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], 100000)
	binary.BigEndian.PutUint32(ihdr[4:], 100000)
	ihdr[8], ihdr[9] = 8, 6
	binary.Write(&b, binary.BigEndian, uint32(13))
	b.WriteString("IHDR")
	b.Write(ihdr)
	binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte("IHDR"), ihdr...)))
	return b.Bytes()
}

func TestBadInput(t *testing.T) {
	good := testJPEG(t, 320, 240, false)
	png := testPNG(t, 320, 240)
	corrupt := append([]byte(nil), good...)
	for i := len(corrupt) / 3; i < len(corrupt)/3+40; i++ {
		corrupt[i] = 0xff
	}
	g := mustCompile(t, pipelineJSON)
	for _, tc := range []struct {
		name string
		data []byte
		want error // nil: any of ErrDecode/ErrLimit/ErrUnsupported, or success (corruption JPEG cannot always detect)
		must bool
	}{
		{"zero-length", nil, ErrDecode, true},
		{"garbage", []byte("this is not an image at all, just some text......"), ErrDecode, true},
		{"jpeg-truncated-header", good[:20], ErrDecode, true},
		{"jpeg-truncated-half", good[:len(good)/2], ErrDecode, true},
		{"jpeg-soi-only", []byte{0xff, 0xd8}, ErrDecode, true},
		{"jpeg-corrupt", corrupt, nil, false},
		{"jpeg-absurd-dims", hugeJPEG(), ErrLimit, true},
		{"png-absurd-dims", hugePNG(), ErrLimit, true},
		{"png-truncated", png[:len(png)/2], ErrDecode, true},
		{"png-bad-crc", append(append([]byte(nil), png[:40]...), append([]byte{0, 0, 0, 0}, png[44:]...)...), ErrDecode, true},
		{"webp-garbage", []byte("RIFF\x20\x00\x00\x00WEBPVP8 \x14\x00\x00\x00garbagegarbagegarbage"), ErrDecode, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := g.Run(context.Background(), Sample{Key: "bad/" + tc.name, Data: tc.data})
			if err == nil {
				if tc.must {
					t.Fatal("accepted")
				}
				return
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if !errors.Is(err, ErrDecode) && !errors.Is(err, ErrLimit) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("untyped error %v", err)
			}
			var se *SampleError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), "bad/"+tc.name) {
				t.Fatalf("error does not name the sample: %v", err)
			}
			t.Log(err)
		})
	}
}

// FuzzDecodeImage feeds arbitrary bytes to the image pipeline (decode through every
// format path, then crop/resize/flip/normalize): errors are fine, panics and hangs are not.
func FuzzDecodeImage(f *testing.F) {
	f.Add(testJPEG(f, 48, 32, false))
	f.Add(testPNG(f, 40, 30))
	f.Add(hugeJPEG())
	f.Add(hugePNG())
	f.Add([]byte("RIFF\x20\x00\x00\x00WEBPVP8L\x14\x00\x00\x00\x2f\x00\x00\x00\x00"))
	g := mustCompile(f, `{"version":1,"seed":"3","limits":{"maxPixels":"4000000"},"nodes":[
	  {"id":"d","op":"decode_image","input":"input"},
	  {"id":"r","op":"random_resized_crop","input":"d","params":{"size":[32]}},
	  {"id":"f","op":"random_hflip","input":"r"},
	  {"id":"n","op":"normalize","input":"f","params":{"mean":[0.5],"std":[0.5]}},
	  {"id":"t","op":"to_tensor","input":"n"},
	  {"id":"raw","op":"to_tensor","input":"d","params":{"dtype":"uint8","layout":"HWC"}}],
	 "outputs":["t","raw"]}`)
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := g.Run(context.Background(), Sample{Key: "fuzz", Data: data})
		if err != nil {
			if !errors.Is(err, ErrDecode) && !errors.Is(err, ErrLimit) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		for _, v := range out.Values {
			if err := v.Tensor.Validate(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

package xformgraph

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFrameSnippetPython runs the numpy reader printed in docs/xformgraph.md (extracted
// verbatim) on frames written by Go and checks what it reads.
func TestFrameSnippetPython(t *testing.T) {
	py := pythonBin(t)
	doc, err := os.ReadFile("../docs/xformgraph.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i := strings.Index(s, "<!-- frame-reader-snippet -->\n```python\n")
	if i < 0 {
		t.Fatal("snippet marker not found in docs/xformgraph.md")
	}
	s = s[i+len("<!-- frame-reader-snippet -->\n```python\n"):]
	snippet := s[:strings.Index(s, "```")]

	g := mustCompile(t, `{"version":1,"seed":"1","nodes":[
	  {"id":"d","op":"decode_image","input":"input"},
	  {"id":"r","op":"resize","input":"d","params":{"size":[6,5]}},
	  {"id":"f32","op":"normalize","input":"r","params":{"mean":[0.5],"std":[0.25]}},
	  {"id":"c32","op":"to_tensor","input":"f32","params":{"layout":"CHW"}},
	  {"id":"bf","op":"to_tensor","input":"r","params":{"layout":"CHW","dtype":"bfloat16"}},
	  {"id":"h16","op":"to_tensor","input":"r","params":{"layout":"HWC","dtype":"float16"}},
	  {"id":"u8","op":"to_tensor","input":"r","params":{"layout":"HWC","dtype":"uint8"}}],
	 "outputs":["c32","bf","h16","u8"]}`)
	data := testPNG(t, 40, 30)
	out, err := g.Run(context.Background(), Sample{Key: "snippet", Data: data})
	if err != nil {
		t.Fatal(err)
	}
	b, err := out.AppendFrames(nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := RawFrame([]byte("\xff\xd8not really a jpeg")).AppendTo(nil)
	b = append(b, raw...)
	dir := t.TempDir()
	path := filepath.Join(dir, "sample.ntxf")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// Expected values computed in Go from the uint8 tensor.
	u8 := out.Values[3].Tensor
	var want []string
	for _, i := range []int{0, 7, 89} {
		want = append(want, fmt.Sprint(u8.Data[i]))
	}
	driver := snippet + `
import sys
buf = open(sys.argv[1], "rb").read()
off, out = 0, []
while off < len(buf):
    a, layout, domain, off = read_frame(buf, off)
    assert domain == sys.argv[2], (domain, sys.argv[2])
    out.append((a, layout))
(c32, l1), (bf, l2), (h16, l3), (u8, l4), (raw, l5) = out
assert (l1, l2, l3, l4, l5) == ("CHW", "CHW", "HWC", "HWC", None), (l1, l2, l3, l4, l5)
assert c32.shape == (3, 6, 5) and c32.dtype == np.float32
assert bf.shape == (3, 6, 5) and bf.dtype == np.float32
assert h16.shape == (6, 5, 3) and h16.dtype == np.float16
assert u8.shape == (6, 5, 3) and u8.dtype == np.uint8
assert raw == b"\xff\xd8not really a jpeg"
ref = u8.astype(np.float64)
assert np.allclose(c32.transpose(1, 2, 0), (ref / 255 - 0.5) / 0.25, atol=1e-5)
assert np.allclose(bf.transpose(1, 2, 0), ref / 255, atol=4e-3)
assert np.allclose(h16.astype(np.float64), ref / 255, atol=1e-3)
flat = u8.reshape(-1)
print(" ".join(str(int(flat[i])) for i in (0, 7, 89)))
`
	script := filepath.Join(dir, "reader.py")
	if err := os.WriteFile(script, []byte(driver), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := exec.Command(py, script, path, Domain().String()).CombinedOutput()
	if err != nil {
		t.Fatalf("python reader: %v\n%s", err, got)
	}
	if strings.TrimSpace(string(got)) != strings.Join(want, " ") {
		t.Fatalf("python read %q, Go wrote %q", got, strings.Join(want, " "))
	}
}

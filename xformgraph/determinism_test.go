package xformgraph

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"image"
	"image/jpeg"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// determinismGraphs covers every random op and every output dtype/layout.
var determinismGraphs = []string{
	pipelineJSON,
	`{"version":1,"seed":"7","nodes":[
	  {"id":"d","op":"decode_image","input":"input"},
	  {"id":"r","op":"resize","input":"d","params":{"size":[256],"filter":"bicubic"}},
	  {"id":"c","op":"center_crop","input":"r","params":{"size":[224]}},
	  {"id":"f","op":"random_hflip","input":"c","params":{"p":0.5}},
	  {"id":"t16","op":"to_tensor","input":"f","params":{"layout":"HWC","dtype":"float16"}},
	  {"id":"bf","op":"to_tensor","input":"f","params":{"layout":"CHW","dtype":"bfloat16"}},
	  {"id":"u8","op":"to_tensor","input":"c","params":{"layout":"CHW","dtype":"uint8"}}],
	 "outputs":["t16","bf","u8"]}`,
	`{"version":1,"seed":"9","nodes":[
	  {"id":"d","op":"decode_image","input":"input","params":{"mode":"gray"}},
	  {"id":"rrc","op":"random_resized_crop","input":"d","params":{"size":[64,96],"scale":[0.2,0.9],"filter":"area"}},
	  {"id":"n","op":"normalize","input":"rrc","params":{"mean":[0.5],"std":[0.25]}}],
	 "outputs":["n"]}`,
}

// determinismDigest runs every graph over several samples and epochs, samples spread over
// goroutines so scheduling varies, and returns one line per output with its SHA-256.
func determinismDigest(t testing.TB) string {
	inputs := [][]byte{testPNG(t, 500, 375), testPNG(t, 333, 251)}
	src, _, _ := image.Decode(bytes.NewReader(testPNG(t, 320, 240)))
	var jb bytes.Buffer
	if err := jpeg.Encode(&jb, src, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	inputs = append(inputs, jb.Bytes())
	type job struct{ g, in, epoch int }
	var jobs []job
	for g := range determinismGraphs {
		for in := range inputs {
			for e := 0; e < 3; e++ {
				jobs = append(jobs, job{g, in, e})
			}
		}
	}
	graphs := make([]*Graph, len(determinismGraphs))
	for i, js := range determinismGraphs {
		graphs[i] = mustCompile(t, js)
	}
	lines := make([]string, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := graphs[j.g].Run(context.Background(), Sample{Key: fmt.Sprintf("s%d", j.in), Epoch: uint64(j.epoch), Data: inputs[j.in]})
			if err != nil {
				lines[i] = "error " + err.Error()
				return
			}
			b, err := out.AppendFrames(nil)
			if err != nil {
				lines[i] = "error " + err.Error()
				return
			}
			lines[i] = fmt.Sprintf("g%d in%d e%d %x", j.g, j.in, j.epoch, sha256.Sum256(b))
		}()
	}
	wg.Wait()
	return strings.Join(lines, "\n")
}

func TestDeterminismAcrossProcesses(t *testing.T) {
	if os.Getenv("XFORMGRAPH_DETERMINISM_CHILD") == "1" {
		fmt.Println("DIGEST-BEGIN")
		fmt.Println(determinismDigest(t))
		fmt.Println("DIGEST-END")
		return
	}
	run := func(procs string) string {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDeterminismAcrossProcesses$", "-test.count=1")
		cmd.Env = append(os.Environ(), "XFORMGRAPH_DETERMINISM_CHILD=1", "GOMAXPROCS="+procs)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child GOMAXPROCS=%s: %v\n%s", procs, err, out)
		}
		s := string(out)
		b, e := strings.Index(s, "DIGEST-BEGIN\n"), strings.Index(s, "DIGEST-END")
		if b < 0 || e < 0 {
			t.Fatalf("child output: %s", s)
		}
		return strings.TrimSpace(s[b+len("DIGEST-BEGIN\n") : e])
	}
	one, many := run("1"), run("2")
	if strings.Contains(one, "error") {
		t.Fatalf("child errors:\n%s", one)
	}
	if one != many {
		t.Fatalf("outputs differ between GOMAXPROCS=1 and 2:\n%s\n---\n%s", one, many)
	}
	if in := determinismDigest(t); in != one {
		t.Fatal("in-process outputs differ from child outputs")
	}
	t.Logf("%d outputs identical across processes", strings.Count(one, "\n")+1)
}

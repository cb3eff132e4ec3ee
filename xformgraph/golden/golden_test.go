package golden

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/newtricks/newtricks/xformgraph"
	"github.com/newtricks/newtricks/xformgraph/ffmpeg"
	"github.com/newtricks/newtricks/xformgraph/frame"
	ximage "github.com/newtricks/newtricks/xformgraph/image"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.txt from this process's outputs")

// cpuFlagsEnv makes a child test process restrict FFmpeg's CPU dispatch before any decoder
// or scaler exists (av_force_cpu_flags).
const cpuFlagsEnv = "NEWTRICKS_GOLDEN_FFMPEG_CPUFLAGS"

func TestMain(m *testing.M) {
	flag.Parse()
	if v := os.Getenv(cpuFlagsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			fmt.Fprintln(os.Stderr, cpuFlagsEnv, err)
			os.Exit(2)
		}
		ffmpeg.ForceCPUFlags(n)
	}
	os.Exit(m.Run())
}

// TestGolden runs every case in this process and checks it against the committed digest.
// In a child started by the tests below it also prints this process's domain and CPU flags.
func TestGolden(t *testing.T) {
	cases := Cases()
	if len(cases) < 50 {
		t.Fatalf("%d cases, want at least 50", len(cases))
	}
	fmt.Printf("GOLDEN-CHILD domain=%q ffmpeg_cpu_flags=%#x resample_avx2=%v\n", xformgraph.Domain().String(), ffmpeg.CPUFlags(), ximage.AVX2())
	digests := map[string]string{}
	var failed int
	for _, c := range cases {
		out, err := c.Run(context.Background())
		if err != nil {
			t.Errorf("case %s: %v", c.ID, err)
			failed++
			continue
		}
		sum, doms, err := Digest(out)
		if err != nil {
			t.Fatalf("case %s: %v", c.ID, err)
		}
		for _, d := range doms {
			if d != xformgraph.Domain().String() {
				t.Fatalf("case %s: frame domain %q, process domain %q", c.ID, d, xformgraph.Domain())
			}
		}
		digests[c.ID] = sum
		if *update {
			continue
		}
		if c.Digest == "" {
			t.Errorf("case %s has no golden digest: regenerate with -update (only with an OutputVersion bump)", c.ID)
			failed++
			continue
		}
		if err := Check(c.ID, out); err != nil {
			t.Error(err)
			failed++
		}
	}
	if *update {
		if failed > 0 {
			t.Fatal("not updating: some cases failed")
		}
		b := FormatGoldenFile(xformgraph.Domain().String(), digests)
		if err := os.WriteFile(filepath.Join("testdata", "golden.txt"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %d digests", len(digests))
		return
	}
	recorded, _, err := parseGolden()
	if err != nil {
		t.Fatal(err)
	}
	for id := range recorded {
		if _, ok := Lookup(id); !ok {
			t.Errorf("golden.txt has digest for unknown case %s", id)
		}
	}
	if failed == 0 {
		t.Logf("%d cases match their golden digests (goldens from domain %q, this process %q)", len(cases), RecordedDomain(), xformgraph.Domain())
	}
}

func TestCheckRejects(t *testing.T) {
	c := Cases()[0]
	out, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(c.ID, out); err != nil {
		t.Fatal(err)
	}
	// Another process's domain in the header does not change the digest.
	f, rest, err := frame.Parse(out)
	if err != nil || len(rest) != 0 {
		t.Fatal(err)
	}
	f.Domain = "xformgraph=1 elsewhere"
	other, err := f.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(c.ID, other); err != nil {
		t.Fatalf("domain string changed the digest: %v", err)
	}
	// One flipped payload bit, a truncated frame, an unknown case, another case's bytes.
	f.Payload = append([]byte(nil), f.Payload...)
	f.Payload[len(f.Payload)/2] ^= 1
	bad, err := f.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(c.ID, bad); !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), c.ID) {
		t.Fatalf("flipped bit: %v", err)
	}
	if err := Check(c.ID, out[:len(out)-1]); err == nil || errors.Is(err, ErrMismatch) {
		t.Fatalf("truncated: %v", err)
	}
	if err := Check("nope", out); !errors.Is(err, ErrUnknownCase) {
		t.Fatalf("unknown case: %v", err)
	}
	if err := Check(Cases()[1].ID, out); !errors.Is(err, ErrMismatch) {
		t.Fatalf("other case: %v", err)
	}
}

// runChild runs TestGolden in a child process (bin: a test binary, or this one) and fails
// unless every case matched; it returns the child's "GOLDEN-CHILD" line.
func runChild(t *testing.T, bin string, env ...string) string {
	t.Helper()
	cmd := exec.Command(bin, "-test.run=^TestGolden$", "-test.count=1", "-test.v")
	cmd.Dir, _ = os.Getwd()
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", bin, env, err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "GOLDEN-CHILD ") {
			return l
		}
	}
	t.Fatalf("%s: no GOLDEN-CHILD line:\n%s", bin, out)
	return ""
}

// TestGoldenWithoutSIMD: FFmpeg restricted to plain C (no MMX/SSE/AVX decoders, IDCTs or
// scalers), libjpeg-turbo restricted to plain C (JSIMD_FORCENONE) and jpegturbo's RGB
// deinterleave to its scalar loop (NT_JPEG_NOSSSE3) and xformgraph's resample passes to
// SSE2 (NT_XFORM_NOAVX2), then libjpeg-turbo on SSE2 only (JSIMD_FORCESSE2, where the host
// would use AVX2), give the same bytes: no CPU-dispatched path of any of them decides a
// pixel. (This process, on an AVX2 host, ran xformgraph's AVX2 passes.)
func TestGoldenWithoutSIMD(t *testing.T) {
	line := runChild(t, os.Args[0], cpuFlagsEnv+"=0", "JSIMD_FORCENONE=1", "NT_JPEG_NOSSSE3=1", "NT_XFORM_NOAVX2=1")
	if !strings.HasSuffix(line, "ffmpeg_cpu_flags=0x0 resample_avx2=false") {
		t.Fatalf("child did not run without SIMD: %s", line)
	}
	t.Log("no SIMD:", line)
	t.Log("SSE2 only:", runChild(t, os.Args[0], "JSIMD_FORCESSE2=1"))
}

// TestGoldenGOAMD64 builds this package's tests for every GOAMD64 level this CPU runs and
// checks the goldens in each: the Go code gives the same bytes whether or not the compiler
// may use fused multiply-adds (v3+) or other newer instructions.
func TestGoldenGOAMD64(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("GOAMD64 levels exist only on amd64")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go tool is needed to build the test for each GOAMD64 level: %v", err)
	}
	dir := t.TempDir()
	ran := 0
	for _, level := range []string{"v1", "v2", "v3", "v4"} {
		if !cpuRuns(level) {
			t.Logf("GOAMD64=%s: this CPU lacks the level's instructions; not run", level)
			continue
		}
		bin := filepath.Join(dir, "golden_"+level+".test")
		build := exec.Command(goTool, "test", "-c", "-o", bin, ".")
		build.Env = append(os.Environ(), "GOAMD64="+level)
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go test -c GOAMD64=%s: %v\n%s", level, err, out)
		}
		if level >= "v3" {
			noFMA(t, bin, level)
		}
		line := runChild(t, bin)
		if !strings.Contains(line, "goamd64="+level+"\"") {
			t.Fatalf("GOAMD64=%s build reports %s", level, line)
		}
		t.Logf("GOAMD64=%s: all cases match", level)
		ran++
	}
	if ran < 3 {
		t.Fatalf("only %d GOAMD64 levels could run on this CPU; the test needs v1-v3 (an x86-64 CPU with AVX2 and FMA)", ran)
	}
}

// cpuRuns reports whether this CPU has the instructions of an x86-64 microarchitecture
// level (from /proc/cpuinfo's flags, as the Linux kernel names them).
func cpuRuns(level string) bool {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return level == "v1"
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "flags" {
			for _, f := range strings.Fields(v) {
				have[f] = true
			}
			break
		}
	}
	need := map[string][]string{
		"v1": nil,
		"v2": {"cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3"},
		"v3": {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"},
		"v4": {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"},
	}
	for _, l := range []string{"v1", "v2", "v3", "v4"} {
		for _, f := range need[l] {
			if !have[f] {
				return false
			}
		}
		if l == level {
			return true
		}
	}
	return false
}

// noFMA fails if the xformgraph code in a test binary built for a GOAMD64 level with fused
// multiply-add instructions contains any: each one rounds a float computation differently
// from the v1 build (explicit float32()/float64() conversions around products keep the
// compiler from fusing them). The goldens check the paths the cases run; this checks all
// of xformgraph's functions. GNU objdump (binutils, installed with the C toolchain cgo
// needs) decodes the FMA instructions; go tool objdump does not.
func noFMA(t *testing.T, bin, level string) {
	t.Helper()
	objdump, err := exec.LookPath("objdump")
	if err != nil {
		t.Fatalf("GNU objdump (binutils) is needed to look for fused multiply-adds: %v", err)
	}
	cmd := exec.Command(objdump, "-d", "--no-show-raw-insn", bin)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var sym string
	var ours, fmaOK int
	var fma []string
	for sc.Scan() {
		l := sc.Text()
		if strings.HasSuffix(l, ">:") {
			if i := strings.IndexByte(l, '<'); i >= 0 {
				sym = l[i+1 : len(l)-2]
				if strings.Contains(sym, "newtricks/xformgraph") {
					ours++
				}
			}
			continue
		}
		f := strings.Fields(l)
		if len(f) < 2 || !strings.HasPrefix(f[1], "vf") || !(strings.Contains(f[1], "madd") || strings.Contains(f[1], "msub")) {
			continue
		}
		if strings.Contains(sym, "newtricks/xformgraph") {
			fma = append(fma, sym+": "+strings.TrimSpace(l))
		} else {
			fmaOK++
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("objdump: %v", err)
	}
	if ours < 100 {
		t.Fatalf("objdump of %s shows only %d xformgraph functions", bin, ours)
	}
	if len(fma) > 0 {
		t.Fatalf("GOAMD64=%s: %d fused multiply-adds in xformgraph code:\n%s", level, len(fma), strings.Join(fma, "\n"))
	}
	t.Logf("GOAMD64=%s: no fused multiply-add in %d xformgraph functions (%d elsewhere in the binary)", level, ours, fmaOK)
}

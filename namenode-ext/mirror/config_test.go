package mirror

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/newtricks/newtricks/internal/coproc"
)

func baseConf() map[string]string {
	return map[string]string{
		"dfs.namenode.rpc-address":            "127.0.0.1:9000",
		"newtricks.mirror.rules":              "ck",
		"newtricks.mirror.dest.namenode":      "127.0.0.1:9100",
		"newtricks.mirror.rule.ck.source":     "/ckpt/{job}/step_{step}",
		"newtricks.mirror.rule.ck.completion": "marker",
	}
}

func TestConfigBadRulesNameTheKey(t *testing.T) {
	cases := []struct{ key, value, wantKey string }{
		{"newtricks.mirror.rule.ck.source", "/ckpt/{job}/step", "newtricks.mirror.rule.ck.source"},
		{"newtricks.mirror.rule.ck.source", "ckpt/{job}/{step}", "newtricks.mirror.rule.ck.source"},
		{"newtricks.mirror.rule.ck.source", "/ckpt/{job}/{stp}", "newtricks.mirror.rule.ck.source"},
		{"newtricks.mirror.rule.ck.completion", "eventually", "newtricks.mirror.rule.ck.completion"},
		{"newtricks.mirror.rule.ck.dest", "/eval/{job}", "newtricks.mirror.rule.ck.dest"},
		{"newtricks.mirror.rule.ck.retain", "-1", "newtricks.mirror.rule.ck.retain"},
		{"newtricks.mirror.rule.ck.retain", "two", "newtricks.mirror.rule.ck.retain"},
		{"newtricks.mirror.dest.namenode", "", "newtricks.mirror.dest.namenode"},
		{"newtricks.mirror.concurrency", "0", "newtricks.mirror.concurrency"},
		{"newtricks.mirror.bandwidth", "fast", "newtricks.mirror.bandwidth"},
		{"newtricks.mirror.staging.dir", "/", "newtricks.mirror.staging.dir"},
		{"newtricks.mirror.rule.ck.marker", "a/b", "newtricks.mirror.rule.ck.marker"},
	}
	for _, tc := range cases {
		conf := baseConf()
		conf[tc.key] = tc.value
		_, err := ConfigFromMap(conf)
		if err == nil || !errors.Is(err, coproc.ErrBadConfig) || !strings.Contains(err.Error(), tc.wantKey) {
			t.Errorf("%s=%q: error %v, want ErrBadConfig naming %s", tc.key, tc.value, err, tc.wantKey)
		}
	}
	conf := baseConf()
	conf["newtricks.mirror.rule.ck.completion"] = "rename"
	if _, err := ConfigFromMap(conf); err == nil || !strings.Contains(err.Error(), "rule.ck.temp") {
		t.Errorf("rename without temp: %v", err)
	}
	if _, err := ConfigFromMap(baseConf()); err != nil {
		t.Fatalf("good config: %v", err)
	}
	cfg, err := ConfigFromMap(map[string]string{})
	if err != nil || len(cfg.Rules) != 0 {
		t.Fatalf("no rules: %v %v", cfg, err)
	}
}

func TestPatternMatch(t *testing.T) {
	p, err := compilePattern("/ckpt/{job}/step_{step}", true)
	if err != nil {
		t.Fatal(err)
	}
	in, ok := p.match("/ckpt/llama/step_000100/model/shard_1.bin")
	if !ok || in.dir != "/ckpt/llama/step_000100" || in.job != "llama" || in.step != 100 || in.stepStr != "000100" || in.rel != "model/shard_1.bin" {
		t.Fatalf("match: %+v %v", in, ok)
	}
	if in, ok := p.match("/ckpt/llama/step_100"); !ok || in.rel != "" {
		t.Fatalf("dir itself: %+v %v", in, ok)
	}
	for _, bad := range []string{"/ckpt/llama/step_x/a", "/ckpt/llama", "/other/llama/step_1/a", "/ckpt/llama/step_1x/a"} {
		if _, ok := p.match(bad); ok {
			t.Errorf("%s matched", bad)
		}
	}
	if got := expand("/eval/{job}/s{step}", "llama", "000100"); got != "/eval/llama/s000100" {
		t.Errorf("expand: %s", got)
	}
}

func TestChecksumIndependentOfWriteSizes(t *testing.T) {
	data := make([]byte, 10000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	a := newFileChecksum(4096, 512)
	a.Write(data)
	b := newFileChecksum(4096, 512)
	for i := 0; i < len(data); i += 333 {
		b.Write(data[i:min(i+333, len(data))])
	}
	if string(a.Sum()) != string(b.Sum()) {
		t.Fatal("checksum depends on write sizes")
	}
	c := newFileChecksum(8192, 512)
	c.Write(data)
	if string(a.Sum()) == string(c.Sum()) {
		t.Fatal("checksum ignores the block size")
	}
}

func TestAddRealUser(t *testing.T) {
	hdr := []byte{0x08, 0x02} // any header message
	var ui []byte
	ui = protowire.AppendTag(ui, 1, protowire.BytesType)
	ui = protowire.AppendString(ui, "alice")
	var cc []byte
	cc = protowire.AppendTag(cc, 2, protowire.BytesType)
	cc = protowire.AppendBytes(cc, ui)
	cc = protowire.AppendTag(cc, 3, protowire.BytesType)
	cc = protowire.AppendString(cc, "org.apache.hadoop.hdfs.protocol.ClientProtocol")
	pkt := make([]byte, 4)
	pkt = protowire.AppendVarint(pkt, uint64(len(hdr)))
	pkt = append(pkt, hdr...)
	pkt = protowire.AppendVarint(pkt, uint64(len(cc)))
	pkt = append(pkt, cc...)
	binary.BigEndian.PutUint32(pkt, uint32(len(pkt)-4))
	out, err := addRealUser(pkt, "mirror")
	if err != nil {
		t.Fatal(err)
	}
	if int(binary.BigEndian.Uint32(out)) != len(out)-4 {
		t.Fatal("length prefix wrong")
	}
	if !strings.Contains(string(out), "alice") || !strings.Contains(string(out), "mirror") || !strings.Contains(string(out), "ClientProtocol") {
		t.Fatalf("rewritten packet lacks a field: %q", out)
	}
}

func TestChecksumFromRangeCRCs(t *testing.T) {
	data := make([]byte, 3*4096+777)
	for i := range data {
		data[i] = byte(i*31 + i/7)
	}
	whole := newFileChecksum(4096, 512)
	whole.Write(data)
	// Ranges of 1024 bytes (multiples of 512), CRCs per 512-byte chunk, assembled in order.
	parts := newFileChecksum(4096, 512)
	left := int64(len(data))
	for off := 0; off < len(data); off += 1024 {
		rng := data[off:min(off+1024, len(data))]
		for i := 0; i < len(rng); i += 512 {
			chunk := rng[i:min(i+512, len(rng))]
			n := min(left, 512)
			parts.addChunk(crc32.Checksum(chunk, castagnoli), n)
			left -= n
		}
	}
	if string(whole.Sum()) != string(parts.Sum()) {
		t.Fatal("checksum assembled from range CRCs differs from the streamed one")
	}
}

// On a Kerberized cluster the mirror refuses to start, naming the key and the reason, rather
// than copy checkpoints as its own service principal.
func TestConfigRefusesKerberos(t *testing.T) {
	conf := map[string]string{
		"newtricks.mirror.rules":          "ck",
		"newtricks.mirror.rule.ck.source": "/ckpt/{job}/step_{step}",
		"newtricks.mirror.dest.namenode":  "dcb:8020",
		"dfs.namenode.rpc-address":        "dca:8020",
		"hadoop.security.authentication":  "kerberos",
	}
	_, err := ConfigFromMap(conf)
	if err == nil || !strings.Contains(err.Error(), "newtricks.mirror.rules") || !strings.Contains(err.Error(), "service principal") {
		t.Fatalf("kerberos: %v", err)
	}
	conf["hadoop.security.authentication"] = "simple"
	if _, err := ConfigFromMap(conf); err != nil {
		t.Fatalf("simple: %v", err)
	}
	delete(conf, "newtricks.mirror.rules")
	conf["hadoop.security.authentication"] = "kerberos"
	if _, err := ConfigFromMap(conf); err != nil {
		t.Fatalf("no rules (mirror off) on a Kerberized cluster: %v", err)
	}
}

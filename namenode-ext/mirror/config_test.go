package mirror

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"net"
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
		{"newtricks.mirror.cleanup.delay", "-1s", "newtricks.mirror.cleanup.delay"},
		{"newtricks.mirror.cleanup.delay", "soon", "newtricks.mirror.cleanup.delay"},
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
	conf = baseConf()
	conf["newtricks.mirror.cleanup.delay"] = "0s"
	if cfg, err := ConfigFromMap(conf); err != nil || cfg.CleanupDelay != 0 {
		t.Fatalf("cleanup.delay 0s: %v %v", cfg.CleanupDelay, err)
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

// TestRewriteUserInfo: both rewrites of the connection context change only its userInfo, to
// exactly the UserInformationProto each means; a context without a user or a cut packet is
// refused.
func TestRewriteUserInfo(t *testing.T) {
	pkt := func(cc []byte) []byte {
		var hdr []byte
		hdr = protowire.AppendTag(hdr, 3, protowire.VarintType)
		hdr = protowire.AppendVarint(hdr, protowire.EncodeZigZag(-3))
		p := make([]byte, 4)
		p = protowire.AppendVarint(p, uint64(len(hdr)))
		p = append(p, hdr...)
		p = protowire.AppendVarint(p, uint64(len(cc)))
		p = append(p, cc...)
		binary.BigEndian.PutUint32(p, uint32(len(p)-4))
		return p
	}
	userInfo := func(fields ...string) []byte { // effective user, then real user
		var ui []byte
		for i, v := range fields {
			ui = protowire.AppendTag(ui, protowire.Number(i+1), protowire.BytesType)
			ui = protowire.AppendString(ui, v)
		}
		return ui
	}
	context := func(ui []byte) []byte {
		var cc []byte
		cc = protowire.AppendTag(cc, 2, protowire.BytesType)
		cc = protowire.AppendBytes(cc, ui)
		cc = protowire.AppendTag(cc, 3, protowire.BytesType)
		return protowire.AppendString(cc, "org.apache.hadoop.hdfs.protocol.ClientProtocol")
	}
	in := pkt(context(userInfo("alice")))

	got, err := addRealUser(in, "mirror")
	if err != nil {
		t.Fatal(err)
	}
	if want := pkt(context(userInfo("alice", "mirror"))); !bytes.Equal(got, want) {
		t.Fatalf("addRealUser:\n got %x\nwant %x", got, want)
	}
	got, ok, err := setEffectiveUser(pkt(context(userInfo("newtricks/nn@EXAMPLE.COM"))), "alice")
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if want := in; !bytes.Equal(got, want) {
		t.Fatalf("setEffectiveUser:\n got %x\nwant %x", got, want)
	}

	var noUser []byte
	noUser = protowire.AppendTag(noUser, 3, protowire.BytesType)
	noUser = protowire.AppendString(noUser, "org.apache.hadoop.hdfs.protocol.ClientProtocol")
	if _, err := addRealUser(pkt(noUser), "mirror"); err == nil {
		t.Fatal("a context without userInfo was rewritten")
	}
	if _, _, err := setEffectiveUser(pkt(noUser), "alice"); err == nil {
		t.Fatal("a context without userInfo was rewritten")
	}
	if _, err := addRealUser(in[:len(in)-3], "mirror"); err == nil {
		t.Fatal("a cut packet was rewritten")
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

// On a Kerberized cluster the mirror needs its own login and the NameNodes' principals; it
// refuses to start without them, naming the keys, rather than act as anyone but the owner.
func TestConfigKerberos(t *testing.T) {
	conf := map[string]string{
		"newtricks.mirror.rules":          "ck",
		"newtricks.mirror.rule.ck.source": "/ckpt/{job}/step_{step}",
		"newtricks.mirror.dest.namenode":  "dcb:8020",
		"newtricks.mirror.dest.http":      "dcb:9870",
		"dfs.namenode.rpc-address":        "dca:8020",
		"hadoop.security.authentication":  "kerberos",
	}
	if _, err := ConfigFromMap(conf); err == nil || !strings.Contains(err.Error(), "newtricks.namenode.ext.kerberos.keytab") {
		t.Fatalf("kerberos without a keytab: %v", err)
	}
	conf["newtricks.namenode.ext.kerberos.keytab"] = "/k/newtricks.keytab"
	conf["newtricks.namenode.ext.kerberos.principal"] = "newtricks/_HOST@EXAMPLE.COM"
	if _, err := ConfigFromMap(conf); err == nil || !strings.Contains(err.Error(), "newtricks.mirror.source.kerberos.principal") {
		t.Fatalf("kerberos without the NameNode principal: %v", err)
	}
	conf["newtricks.mirror.source.kerberos.principal"] = "hdfs/_HOST@EXAMPLE.COM"
	c, err := ConfigFromMap(conf)
	if err != nil {
		t.Fatal(err)
	}
	k := c.Kerberos
	if k == nil || k.DestSPN != "hdfs/_HOST@EXAMPLE.COM" || k.DestHTTPSPN != "HTTP/dcb" || k.DataTransferProtection != "authentication" ||
		strings.Contains(k.Principal, "_HOST") {
		t.Fatalf("kerberos config %+v", k)
	}
	conf["hadoop.security.authentication"] = "token"
	if _, err := ConfigFromMap(conf); err == nil || !strings.Contains(err.Error(), "newtricks.mirror.rules") {
		t.Fatalf("unknown authentication: %v", err)
	}
	conf["hadoop.security.authentication"] = "simple"
	if c, err := ConfigFromMap(conf); err != nil || c.Kerberos != nil {
		t.Fatalf("simple: %v %+v", err, c.Kerberos)
	}
}

// The connection context colinmarc/hdfs sends after a Kerberos SASL exchange names the
// authenticated principal; the mirror rewrites it to the owner, leaves SASL packets alone.
func TestSetEffectiveUser(t *testing.T) {
	packet := func(callID int64, body []byte) []byte {
		var hdr []byte
		hdr = protowire.AppendTag(hdr, 1, protowire.VarintType)
		hdr = protowire.AppendVarint(hdr, 2)
		hdr = protowire.AppendTag(hdr, 3, protowire.VarintType)
		hdr = protowire.AppendVarint(hdr, protowire.EncodeZigZag(callID))
		hdr = protowire.AppendTag(hdr, 4, protowire.BytesType)
		hdr = protowire.AppendBytes(hdr, []byte("0123456789abcdef"))
		p := []byte{0, 0, 0, 0}
		p = protowire.AppendVarint(p, uint64(len(hdr)))
		p = append(p, hdr...)
		p = protowire.AppendVarint(p, uint64(len(body)))
		p = append(p, body...)
		binary.BigEndian.PutUint32(p, uint32(len(p)-4))
		return p
	}
	var ui, ctx []byte
	ui = protowire.AppendTag(ui, 1, protowire.BytesType)
	ui = protowire.AppendString(ui, "newtricks/localhost@EXAMPLE.COM")
	ctx = protowire.AppendTag(ctx, 2, protowire.BytesType)
	ctx = protowire.AppendBytes(ctx, ui)
	ctx = protowire.AppendTag(ctx, 3, protowire.BytesType)
	ctx = protowire.AppendString(ctx, "org.apache.hadoop.hdfs.protocol.ClientProtocol")

	if _, ok, err := setEffectiveUser(packet(-33, []byte{8, 1}), "alice"); ok || err != nil {
		t.Fatalf("SASL packet touched: %v %v", ok, err)
	}
	nb, ok, err := setEffectiveUser(packet(-3, ctx), "alice")
	if !ok || err != nil {
		t.Fatalf("context packet: %v %v", ok, err)
	}
	hdr, body, err := splitPacket(nb)
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := callID(hdr); id != -3 {
		t.Fatalf("call id %d", id)
	}
	if !bytes.Contains(body, []byte("alice")) || bytes.Contains(body, []byte("newtricks/localhost")) ||
		!bytes.Contains(body, []byte("ClientProtocol")) {
		t.Fatalf("rewritten context %q", body)
	}
}

type recordConn struct {
	net.Conn
	writes [][]byte
}

func (r *recordConn) Write(b []byte) (int, error) {
	r.writes = append(r.writes, append([]byte(nil), b...))
	return len(b), nil
}

// A Kerberos connection as colinmarc/hdfs writes it: header, SASL packets (call id -33), the
// connection context (-3), then calls: only the context is rewritten.
func TestProxyConnKerberosSequence(t *testing.T) {
	pkt := func(callID int64, body []byte) []byte {
		var hdr []byte
		hdr = protowire.AppendTag(hdr, 3, protowire.VarintType)
		hdr = protowire.AppendVarint(hdr, protowire.EncodeZigZag(callID))
		p := []byte{0, 0, 0, 0}
		p = protowire.AppendVarint(p, uint64(len(hdr)))
		p = append(p, hdr...)
		p = protowire.AppendVarint(p, uint64(len(body)))
		p = append(p, body...)
		binary.BigEndian.PutUint32(p, uint32(len(p)-4))
		return p
	}
	var ui, ctx []byte
	ui = protowire.AppendTag(ui, 1, protowire.BytesType)
	ui = protowire.AppendString(ui, "newtricks/localhost@EXAMPLE.COM")
	ctx = protowire.AppendTag(ctx, 2, protowire.BytesType)
	ctx = protowire.AppendBytes(ctx, ui)
	rc := &recordConn{}
	c := &proxyConn{Conn: rc, effective: "alice"}
	seq := [][]byte{[]byte("hrpc\x09\x00\xdf"), pkt(-33, []byte{1}), pkt(-33, []byte{2}), pkt(-3, ctx), pkt(0, []byte{3}), pkt(-3, ctx)}
	for _, b := range seq {
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	for i, w := range rc.writes {
		changed := !bytes.Equal(w, seq[i])
		if changed != (i == 3) {
			t.Fatalf("write %d changed=%v", i, changed)
		}
	}
	if !bytes.Contains(rc.writes[3], []byte("alice")) || bytes.Contains(rc.writes[3], []byte("newtricks/")) {
		t.Fatalf("context %q", rc.writes[3])
	}
	// A simple-auth header on a Kerberos connection is refused, not passed on unchanged.
	if _, err := (&proxyConn{Conn: &recordConn{}, effective: "alice"}).Write([]byte("hrpc\x09\x00\x00")); err == nil {
		t.Fatal("simple handshake accepted for a Kerberos proxy connection")
	}
}

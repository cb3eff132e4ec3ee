package offload

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/newtricks/newtricks/datanode-ext/governor"
	"github.com/newtricks/newtricks/internal/coproc"
)

// TestConfigFromConf: the documented defaults (docs/offload.md), keys read into their fields,
// and a value out of range refused with the key named.
func TestConfigFromConf(t *testing.T) {
	g, s, err := ConfigFromConf(coproc.Conf{})
	if err != nil {
		t.Fatal(err)
	}
	wantG := governor.Config{High: 0.8, Low: 0.7, Interval: 500 * time.Millisecond}
	wantS := Config{Workers: 1, Nice: 10, Lookahead: 4, MaxLookahead: 64, QueueMaxBytes: 512 << 20, MaxSessions: 64,
		MaxSessionsPerUser: 16, MaxReadBytes: 64 << 20, MaxReads: 8,
		Idle: 10 * time.Minute, MaxWait: 5 * time.Second, MaxMembers: 256, MaxStep: 1 << 24, PeerConns: 64, PeerIdle: 2 * time.Minute}
	if g != wantG || s != wantS {
		t.Errorf("defaults %+v %+v, want %+v %+v", g, s, wantG, wantS)
	}

	g, s, err = ConfigFromConf(coproc.Conf{Prefix + ".cpu.high": "0.9", Prefix + ".cpu.low": "0.5", Prefix + ".cpu.interval.ms": "250",
		Prefix + ".workers": "3", Prefix + ".nice": "0", Prefix + ".lookahead": "8", Prefix + ".lookahead.max": "16",
		Prefix + ".queue.max.bytes": "2097152", Prefix + ".sessions.max": "5", Prefix + ".session.idle.ms": "2000",
		Prefix + ".max.wait.ms": "7", Prefix + ".members.max": "9", Prefix + ".peers.max": "3", Prefix + ".peers.idle.ms": "5000",
		Prefix + ".sessions.max.per.user": "2", Prefix + ".reads.max": "3", "newtricks.datanode.ext.read.max.bytes": "1000",
		Prefix + ".step.max": "100000"})
	if err != nil {
		t.Fatal(err)
	}
	wantG = governor.Config{High: 0.9, Low: 0.5, Interval: 250 * time.Millisecond}
	wantS = Config{Workers: 3, Nice: 0, Lookahead: 8, MaxLookahead: 16, QueueMaxBytes: 2 << 20, MaxSessions: 5,
		MaxSessionsPerUser: 2, MaxReadBytes: 1000, MaxReads: 3,
		Idle: 2 * time.Second, MaxWait: 7 * time.Millisecond, MaxMembers: 9, MaxStep: 100000, PeerConns: 3, PeerIdle: 5 * time.Second}
	if g != wantG || s != wantS {
		t.Errorf("read %+v %+v, want %+v %+v", g, s, wantG, wantS)
	}

	for _, tc := range []struct {
		key, value, msg string
	}{
		{".cpu.high", "lots", "cpu.high"},
		{".cpu.high", "1.5", "high threshold"},
		{".workers", "300", "workers 300"},
		{".workers", "two", "workers"},
		{".nice", "20", "nice 20"},
		{".lookahead", "100", "lookahead 100"},
		{".queue.max.bytes", "1000", "queue.max.bytes 1000"},
		{".sessions.max", "-1", "sessions.max"},
		{".session.idle.ms", "10", "session.idle.ms"},
		{".peers.max", "5000", "peers.max 5000"},
		{".peers.idle.ms", "10", "peers.idle.ms"},
		{".sessions.max.per.user", "-2", "sessions.max.per.user"},
		{".reads.max", "2000", "reads.max 2000"},
		{".reads.max", "x", "reads.max"},
		{".step.max", "-1", "step.max=-1"},
		{".step.max", "9223372036854775807", "step.max 9223372036854775807"},
		{".step.max", "lots", "step.max"},
		{"@newtricks.datanode.ext.read.max.bytes", "-5", "newtricks.datanode.ext.read.max.bytes=-5"},
		{"@newtricks.datanode.ext.read.max.bytes", "4294967296", "read.max.bytes"},
	} {
		key := Prefix + tc.key
		if tc.key[0] == '@' {
			key = tc.key[1:]
		}
		_, _, err := ConfigFromConf(coproc.Conf{key: tc.value})
		if !errors.Is(err, coproc.ErrBadConfig) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s=%s: %v, want a bad configuration naming %q", tc.key, tc.value, err, tc.msg)
		}
	}
	if _, err := NewManager(Config{Workers: 300}, Options{}); !errors.Is(err, ErrConfig) {
		t.Errorf("NewManager with 300 workers: %v, want ErrConfig", err)
	}
}

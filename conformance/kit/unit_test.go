package kit

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// TestFromConfShipped: the shipped compose conf dirs name the compose cluster.
func TestFromConfShipped(t *testing.T) {
	c, err := FromConf("../../docker-compose/conf/namenode", "../../docker-compose/conf/datanode")
	if err != nil {
		t.Fatal(err)
	}
	if c.NameNode != "namenode:8020" || c.NameNodeHTTP != "namenode:9870" || c.NameNodeAPI != "namenode:9880" || c.DataNodeAPIPort != 9890 {
		t.Errorf("from the compose conf: %+v", c)
	}
	if len(c.Doctor) != 2 || c.Doctor[0].Local || c.Doctor[1].Local {
		t.Errorf("doctor targets %+v: want both conf dirs, checked remotely", c.Doctor)
	}
	if _, err := FromConf(t.TempDir()); err == nil {
		t.Error("a dir without hdfs-site.xml was accepted")
	}
}

// TestStandalone: the standalone engine ends a case at Fatalf and Skipf, runs cleanups last
// first, records sub-cases, and filters by name.
func TestStandalone(t *testing.T) {
	var out bytes.Buffer
	res := &Result{}
	top := &standalone{name: "kit", out: &out, res: res, mu: &sync.Mutex{}, top: true, filter: regexp.MustCompile("a|fatal|skip|error")}
	var order []string
	r := top.run(func(t T) {
		t.Run("a pass", func(t T) {
			t.Cleanup(func() { order = append(order, "first") })
			t.Cleanup(func() { order = append(order, "second") })
			t.Logf("hello")
		})
		t.Run("fatal", func(t T) {
			t.Fatalf("boom %d", 1)
			order = append(order, "after fatal")
		})
		t.Run("skip", func(t T) {
			t.Skipf("not here")
			order = append(order, "after skip")
		})
		t.Run("error", func(t T) { t.Errorf("one"); t.Errorf("two") })
		t.Run("filtered out", func(t T) { order = append(order, "filtered") })
	})
	if strings.Join(order, ",") != "second,first" {
		t.Errorf("order %v", order)
	}
	if r.Outcome != Failed || res.Pass != 1 || res.Fail != 2 || res.Skip != 1 || len(res.Cases) != 4 {
		t.Errorf("top %+v, result %+v", r, res)
	}
	for _, c := range res.Cases {
		if c.Name == "kit/fatal" && c.Reason != "boom 1" || c.Name == "kit/error" && c.Reason != "one" || c.Name == "kit/skip" && c.Reason != "not here" {
			t.Errorf("case %+v", c)
		}
	}
	if !strings.Contains(out.String(), "--- FAIL: kit/fatal") || !strings.Contains(out.String(), "kit/a_pass: hello") {
		t.Errorf("output:\n%s", out.String())
	}
}

package kit

import (
	"fmt"
	"path"
	"strings"
	"time"

	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

const subscribeKey = "newtricks.namenode.ext.events.subscribe"

// caseEvents: files written reach namenode-ext as CLOSE events, once each, with their size.
func caseEvents(t T, e *Env) {
	if v, ok := runningConf(e.Ctx, e.C.NameNodeHTTP, subscribeKey); ok && !subscribes(v, "CLOSE") {
		t.Skipf("the running NameNode's %s is %q: namenode-ext keeps no CLOSE events to look at (set it to CLOSE, or CREATE,CLOSE,..., to run this case)", subscribeKey, v)
	}
	dir := path.Join(e.Dir, "events")
	if err := e.FS.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sizes := map[string]int64{}
	for i := 0; i < 3; i++ {
		p := path.Join(dir, fmt.Sprintf("e-%d", i))
		n := 1000 + i
		if err := write(e.Ctx, e.FS, p, 0, randomBytes(n), 0o644); err != nil {
			t.Fatalf("write %s: %v", p, err)
		}
		sizes[p] = int64(n)
	}
	took := eventually(t, 60*time.Second, "a CLOSE event for every file written", func() error {
		resp, err := e.NS.RecentEvents(e.Ctx, &pb.RecentEventsRequest{PathPrefix: dir + "/"})
		if err != nil {
			return err
		}
		got := map[string][]*pb.NamespaceRecord{}
		for _, ev := range resp.GetEvents() {
			if ns := ev.GetNamespace(); ns != nil && ns.GetType() == "CLOSE" {
				got[ns.GetPath()] = append(got[ns.GetPath()], ns)
			}
		}
		for _, p := range sortedKeys(sizes) {
			switch evs := got[p]; {
			case len(evs) == 0:
				return fmt.Errorf("no CLOSE of %s yet (%d events under %s)", p, len(resp.GetEvents()), dir)
			case len(evs) > 1:
				return fmt.Errorf("%d CLOSE events of %s, want 1", len(evs), p)
			case evs[0].GetSize() != sizes[p]:
				return fmt.Errorf("CLOSE of %s says size %d, wrote %d", p, evs[0].GetSize(), sizes[p])
			}
		}
		return nil
	})
	t.Logf("%d CLOSE events arrived within %v of the last close", len(sizes), took.Round(10*time.Millisecond))
}

// subscribes reports whether a newtricks.namenode.ext.events.subscribe value asks for typ.
func subscribes(v, typ string) bool {
	for _, s := range strings.Split(v, ",") {
		if strings.EqualFold(strings.TrimSpace(s), typ) {
			return true
		}
	}
	return false
}

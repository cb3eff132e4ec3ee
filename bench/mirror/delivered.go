package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// dcbWritten is how many bytes dc-b's DataNodes have received into blocks, as HDFS on dc-b
// tells it: the sum of every DataNode's DataNodeActivity BytesWritten counter (its JMX), which
// BlockReceiver adds to per packet, so it includes blocks still being written, unlike a file
// length from the NameNode. With replication 1 and nothing else writing on dc-b during a mirror
// run, the counter's growth over the run is the bytes the mirror has delivered to dc-b; a
// transfer that was retried counts twice, which can only make "unsent at completion" (and so
// the floor) smaller.
func (e *env) dcbWritten(ctx context.Context) (int64, error) {
	var sum int64
	for _, dn := range e.b.DataNodes() {
		n, err := jmxCounter(ctx, dn.HTTPAddr, "Hadoop:service=DataNode,name=DataNodeActivity-*", "BytesWritten")
		if err != nil {
			return 0, err
		}
		sum += n
	}
	return sum, nil
}

var jmxHTTP = &http.Client{Timeout: 5 * time.Second}

// jmxCounter reads one numeric attribute of the first bean matching query at http://addr/jmx.
func jmxCounter(ctx context.Context, addr, query, attr string) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/jmx?qry="+query, nil)
	if err != nil {
		return 0, err
	}
	resp, err := jmxHTTP.Do(req)
	if err != nil {
		return 0, fmt.Errorf("jmx %s: %w", addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("jmx %s: HTTP %s", addr, resp.Status)
	}
	var r struct {
		Beans []map[string]json.RawMessage `json:"beans"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return 0, fmt.Errorf("jmx %s: decode: %w", addr, err)
	}
	if len(r.Beans) == 0 {
		return 0, fmt.Errorf("jmx %s: no bean %s", addr, query)
	}
	var n int64
	if err := json.Unmarshal(r.Beans[0][attr], &n); err != nil {
		return 0, fmt.Errorf("jmx %s: %s.%s: %w", addr, query, attr, err)
	}
	return n, nil
}

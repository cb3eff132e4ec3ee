package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"time"
)

// ErrNotReady is returned (wrapped) while a daemon's JMX is unreachable or reports it not
// ready.
var ErrNotReady = errors.New("not ready")

// LiveNode is the NameNode's view of one live DataNode (NameNodeInfo.LiveNodes).
type LiveNode struct {
	// Name is host:xferPort, e.g. "127.0.0.1:40123".
	Name string `json:"-"`
	// XferAddr is the DataNode's data transfer address.
	XferAddr string `json:"xferaddr"`
	// InfoAddr is the DataNode's HTTP address.
	InfoAddr string `json:"infoAddr"`
	// LastContact is seconds since the last heartbeat.
	LastContact int64  `json:"lastContact"`
	Capacity    int64  `json:"capacity"`
	Remaining   int64  `json:"remaining"`
	NumBlocks   int64  `json:"numBlocks"`
	AdminState  string `json:"adminState"`
}

// NameNodeStatus is a snapshot of the NameNode's readiness from its JMX.
type NameNodeStatus struct {
	// SafeMode is empty when safe mode is off, else the NameNode's explanation.
	SafeMode string
	// NumLiveDataNodes and NumDeadDataNodes come from FSNamesystemState.
	NumLiveDataNodes int
	NumDeadDataNodes int
	// LiveNodes sorted by Name.
	LiveNodes []LiveNode
}

// Ready reports whether safe mode is off and at least n DataNodes are live with capacity
// reported (so a write can place blocks on them).
func (s NameNodeStatus) Ready(n int) bool {
	if s.SafeMode != "" {
		return false
	}
	usable := 0
	for _, l := range s.LiveNodes {
		if l.Capacity > 0 {
			usable++
		}
	}
	return usable >= n
}

type jmxResponse struct {
	Beans []map[string]json.RawMessage `json:"beans"`
}

var jmxHTTP = &http.Client{Timeout: 3 * time.Second}

// JMXBean fetches the first bean matching query (e.g.
// "Hadoop:service=NameNode,name=NameNodeInfo") from a daemon's http://addr/jmx, each attribute
// as raw JSON; an unreachable daemon or a missing bean is ErrNotReady.
func JMXBean(ctx context.Context, addr, query string) (map[string]json.RawMessage, error) {
	return jmxBean(ctx, addr, query)
}

// jmxBean fetches the first bean matching query from http://addr/jmx.
func jmxBean(ctx context.Context, addr, query string) (map[string]json.RawMessage, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/jmx?qry="+query, nil)
	if err != nil {
		return nil, err
	}
	resp, err := jmxHTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("jmx %s: %w: %v", addr, ErrNotReady, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("jmx %s: %w: HTTP %s", addr, ErrNotReady, resp.Status)
	}
	var r jmxResponse
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, fmt.Errorf("jmx %s: decode: %w", addr, err)
	}
	if len(r.Beans) == 0 {
		return nil, fmt.Errorf("jmx %s: %w: no bean %s", addr, ErrNotReady, query)
	}
	return r.Beans[0], nil
}

// nameNodeStatus reads the NameNode's NameNodeInfo and FSNamesystemState beans.
func nameNodeStatus(ctx context.Context, httpAddr string) (NameNodeStatus, error) {
	var st NameNodeStatus
	info, err := jmxBean(ctx, httpAddr, "Hadoop:service=NameNode,name=NameNodeInfo")
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(info["Safemode"], &st.SafeMode); err != nil {
		return st, fmt.Errorf("NameNodeInfo.Safemode: %w", err)
	}
	var liveJSON string
	if err := json.Unmarshal(info["LiveNodes"], &liveJSON); err != nil {
		return st, fmt.Errorf("NameNodeInfo.LiveNodes: %w", err)
	}
	live := map[string]LiveNode{}
	if err := json.Unmarshal([]byte(liveJSON), &live); err != nil {
		return st, fmt.Errorf("NameNodeInfo.LiveNodes: %w", err)
	}
	for name, l := range live {
		l.Name = name
		st.LiveNodes = append(st.LiveNodes, l)
	}
	sort.Slice(st.LiveNodes, func(i, j int) bool { return st.LiveNodes[i].Name < st.LiveNodes[j].Name })
	fs, err := jmxBean(ctx, httpAddr, "Hadoop:service=NameNode,name=FSNamesystemState")
	if err != nil {
		return st, err
	}
	_ = json.Unmarshal(fs["NumLiveDataNodes"], &st.NumLiveDataNodes)
	_ = json.Unmarshal(fs["NumDeadDataNodes"], &st.NumDeadDataNodes)
	return st, nil
}

// nameNodeHAState reads NameNode's HA state (NameNodeStatus.State: "active", "standby",
// "initializing"; a NameNode without HA says "active").
func nameNodeHAState(ctx context.Context, httpAddr string) (string, error) {
	b, err := jmxBean(ctx, httpAddr, "Hadoop:service=NameNode,name=NameNodeStatus")
	if err != nil {
		return "", err
	}
	var state string
	if err := json.Unmarshal(b["State"], &state); err != nil {
		return "", fmt.Errorf("NameNodeStatus.State: %w", err)
	}
	return state, nil
}

// dataNodeRegistered reports whether the DataNode at httpAddr has a running block pool
// service actor (it registered with the NameNode).
func dataNodeRegistered(ctx context.Context, httpAddr string) (bool, error) {
	info, err := jmxBean(ctx, httpAddr, "Hadoop:service=DataNode,name=DataNodeInfo")
	if err != nil {
		return false, err
	}
	var actorsJSON string
	if err := json.Unmarshal(info["BPServiceActorInfo"], &actorsJSON); err != nil {
		return false, fmt.Errorf("DataNodeInfo.BPServiceActorInfo: %w", err)
	}
	var actors []map[string]any
	if err := json.Unmarshal([]byte(actorsJSON), &actors); err != nil {
		return false, fmt.Errorf("DataNodeInfo.BPServiceActorInfo: %w", err)
	}
	for _, a := range actors {
		if s, _ := a["ActorState"].(string); s == "RUNNING" {
			return true, nil
		}
	}
	return false, nil
}

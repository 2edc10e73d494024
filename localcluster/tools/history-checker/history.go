package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/anishathalye/porcupine"
)

// History is what the traffic generator records (test/history/recorder.ts writes it).
type History struct {
	Operations []Operation `json:"operations"`
	Watches    []Watch     `json:"watches"`
	// Rollback is the rollback in place the recording went through, if any (epochs.go).
	Rollback *Rollback `json:"rollback,omitempty"`
}

// Operation is one client call: its input, when it was called and returned (monotonic
// nanoseconds), and its output; Output is nil when the outcome is unknown (an error or a
// timeout: the call may or may not have taken effect).
type Operation struct {
	Client int     `json:"client"`
	Call   int64   `json:"call"`
	Return int64   `json:"return"`
	Input  Input   `json:"input"`
	Output *Output `json:"output"`
	Error  string  `json:"error,omitempty"`
}

// Input is one request. Type is put, get, delete, txn, leaseGrant or leaseRevoke. Key is the
// key the request touches (for leaseGrant and leaseRevoke, the one key the lease is used with).
type Input struct {
	Type  string `json:"type"`
	Key   string `json:"key"`
	Value string `json:"value,omitempty"`
	// Lease is the lease a put attaches its key to, and the lease revoked.
	Lease string `json:"lease,omitempty"`
	// Compare is a txn's condition; on success it puts Value, else it reads Key.
	Compare *Compare `json:"compare,omitempty"`
}

// Compare is a txn's condition on Key: its mod revision equals ModRevision (0: the key does
// not exist), or its value equals Value.
type Compare struct {
	ModRevision *int64  `json:"modRevision,omitempty"`
	Value       *string `json:"value,omitempty"`
}

// Output is a known result. Revision is the response header's; KV is what a get (or a failed
// txn's read) found, or the key a delete removed (nil: none).
type Output struct {
	Revision  int64  `json:"revision"`
	KV        *KV    `json:"kv,omitempty"`
	Deleted   int64  `json:"deleted,omitempty"`
	Succeeded bool   `json:"succeeded,omitempty"`
	Lease     string `json:"lease,omitempty"`
}

// KV is a key's value and mod revision as read.
type KV struct {
	Value       string `json:"value"`
	ModRevision int64  `json:"modRevision"`
}

// Watch is one watcher's stream of events (resumed by the client after a member restart).
type Watch struct {
	Watcher       int     `json:"watcher"`
	Client        int     `json:"client"`
	Prefix        string  `json:"prefix"`
	StartRevision int64   `json:"startRevision"`
	Events        []Event `json:"events"`
	// Resumes counts the times the client made the watch again after its stream broke.
	Resumes int `json:"resumes"`
	// Complete: the generator waited until this watcher had seen every acknowledged write.
	Complete bool `json:"complete"`
	// Canceled is set when etcd canceled the watch (a compaction past where it resumed): its last
	// event is its end. The watcher's next watch, if any, is a Watch of its own.
	Canceled *Cancel `json:"canceled,omitempty"`
}

// Cancel is when and why etcd canceled a watch.
type Cancel struct {
	At     int64  `json:"at"`
	Reason string `json:"reason"`
}

// Event is one watch event, with the time it was received.
type Event struct {
	Type        string `json:"type"`
	Key         string `json:"key"`
	Value       string `json:"value,omitempty"`
	ModRevision int64  `json:"modRevision"`
	At          int64  `json:"at"`
}

func readHistory(r io.Reader) (*History, error) {
	var h History
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return nil, fmt.Errorf("reading the history: %w", err)
	}
	for i, op := range h.Operations {
		switch op.Input.Type {
		case "put", "get", "delete", "leaseGrant", "leaseRevoke":
		case "txn":
			if op.Input.Compare == nil || (op.Input.Compare.ModRevision == nil) == (op.Input.Compare.Value == nil) {
				return nil, fmt.Errorf("operation %d: a txn compares exactly one of modRevision and value", i)
			}
		default:
			return nil, fmt.Errorf("operation %d: unknown type %q", i, op.Input.Type)
		}
		if op.Output != nil && op.Return < op.Call {
			return nil, fmt.Errorf("operation %d returned (%d) before it was called (%d)", i, op.Return, op.Call)
		}
	}
	if rb := h.Rollback; rb != nil && (rb.SnapshotRevision <= 0 || rb.Bump <= 0 || rb.Answered < rb.Asked) {
		return nil, fmt.Errorf("rollback: a snapshot revision and a bump above 0, answered after asked: %+v", *rb)
	}
	return &h, nil
}

// Prepared is the history as porcupine checks it, and what was left out and why.
type Prepared struct {
	Operations []porcupine.Operation
	// Unknown counts operations with an unknown outcome, Dropped those of them left out.
	Unknown, Dropped int
	// Rollbacks counts the synthetic rollback operations among Operations (one a key).
	Rollbacks int
}

// prepare turns the recorded operations into porcupine's. An operation with an unknown outcome
// may have taken effect at any time after its call, so it gets a return time after every other
// (porcupine may then place it anywhere from its call on, the end meaning "never"), except:
//   - a read, a lease grant (its ID never used) and a put or txn whose value nobody saw (no read,
//     no watch event) are left out: values are unique, so if such a write took effect, nothing
//     observed it (a read of its key or a failed txn would have returned its value, every watcher
//     would have seen it), and leaving it out changes no verdict;
//   - a write whose value a watcher saw took effect before the first watcher saw it: that is its
//     return time (as etcd's robustness tests do), which keeps porcupine's search small.
//
// With a rollback, each key gets a "rollback" operation called when it was asked and returned when
// it was answered, of a client of its own: porcupine places it in between (epochs.go).
func prepare(h *History, e epochs) Prepared {
	seenAt := map[string]int64{}
	read := map[string]bool{}
	for _, w := range h.Watches {
		for _, e := range w.Events {
			if e.Type == "put" {
				if at, ok := seenAt[e.Value]; !ok || e.At < at {
					seenAt[e.Value] = e.At
				}
			}
		}
	}
	for _, op := range h.Operations {
		if op.Output != nil && op.Output.KV != nil {
			read[op.Output.KV.Value] = true
		}
	}
	var p Prepared
	for _, op := range h.Operations {
		in := op.Input
		ret := op.Return
		if op.Output == nil {
			p.Unknown++
			writes := in.Type == "put" || in.Type == "txn"
			_, watched := seenAt[in.Value]
			if in.Type == "get" || in.Type == "leaseGrant" || (writes && !watched && !read[in.Value]) {
				p.Dropped++
				continue
			}
			ret = math.MaxInt64
			if at, ok := seenAt[in.Value]; ok && writes {
				ret = max(at, op.Call)
			}
		}
		out := op.Output
		p.Operations = append(p.Operations, porcupine.Operation{ClientId: op.Client, Input: &in, Call: op.Call, Output: out, Return: ret})
	}
	if e.On {
		ops := rollbackOps(h, p.Operations, e)
		p.Operations, p.Rollbacks = append(p.Operations, ops...), len(ops)
	}
	sort.SliceStable(p.Operations, func(i, j int) bool { return p.Operations[i].Call < p.Operations[j].Call })
	return p
}

// rollbackOps is the rollback as one operation on each key of `ops`.
func rollbackOps(h *History, ops []porcupine.Operation, e epochs) []porcupine.Operation {
	client := 0
	for _, op := range h.Operations {
		client = max(client, op.Client+1)
	}
	seen := map[string]bool{}
	var r []porcupine.Operation
	for _, op := range ops {
		key := op.Input.(*Input).Key
		if seen[key] {
			continue
		}
		seen[key] = true
		in := &Input{Type: "rollback", Key: key}
		r = append(r, porcupine.Operation{ClientId: client, Input: in, Call: h.Rollback.Asked, Output: &Output{Revision: e.From}, Return: h.Rollback.Answered})
	}
	return r
}

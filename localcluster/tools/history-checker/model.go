package main

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/anishathalye/porcupine"
)

// content is what a key holds: its value, mod revision and lease, and the leases used with it.
type content struct {
	Exists bool
	Value  string
	// ModRev is the key's mod revision when Known; after a write of unknown outcome took effect
	// it is unknown, and ModRev is a bound below it (the next read learns it), ModMax one above it
	// when not 0 (such a write placed at or before the snapshot of a rollback).
	ModRev int64
	ModMax int64
	Known  bool
	Lease  string
	// Leases are the granted, unrevoked leases used with this key, sorted and comma-joined (so
	// the state compares with ==).
	Leases string
}

// keyState is one key as the model knows it. The history is checked key by key (a history is
// linearizable when each object's is: Herlihy and Wing's locality), so the store's revision is
// known here only as this key's operations saw it: Rev is a lower bound, raised by every answer,
// and other keys' writes may move the store past it at any time. revisionOrder checks the
// revisions across keys.
type keyState struct {
	Rev int64
	content
	// With a rollback (epochs.go): Epoch is 1 once it took place, and until then AtSnap is the key
	// as the snapshot holds it, the snapshot's revision being known to lie in [SnapLo, SnapHi].
	Epoch          int
	AtSnap         content
	SnapLo, SnapHi int64
}

// describeContent is a key's content in porcupine's visualization (no String method: the
// state's hash prints every field).
func describeContent(c content) string {
	if !c.Exists {
		return "absent"
	}
	mod := fmt.Sprint(c.ModRev)
	if !c.Known {
		mod = fmt.Sprintf(">%d", c.ModRev)
	}
	return c.Value + "@" + mod
}

func (s keyState) hasLease(id string) bool { return slices.Contains(strings.Split(s.Leases, ","), id) }

func (s keyState) withLease(id string, on bool) keyState {
	set := slices.DeleteFunc(strings.Split(s.Leases, ","), func(l string) bool { return l == "" || l == id })
	if on {
		set = append(set, id)
	}
	slices.Sort(set)
	s.Leases = strings.Join(set, ",")
	return s
}

// matches says whether kv, read at revision `at`, is this key's value and mod revision.
func (s keyState) matches(kv *KV, at int64) bool {
	if !s.Exists || kv.Value != s.Value {
		return false
	}
	if s.Known {
		return kv.ModRevision == s.ModRev
	}
	return kv.ModRevision > s.ModRev && kv.ModRevision <= at && (s.ModMax == 0 || kv.ModRevision <= s.ModMax)
}

// read is a read's answer checked: the key as it is, at a revision no older than the model's.
func (s keyState) read(out *Output) (keyState, bool) {
	if out.Revision < s.Rev {
		return s, false
	}
	if out.KV == nil {
		if s.Exists {
			return s, false
		}
	} else if !s.matches(out.KV, out.Revision) {
		return s, false
	} else {
		s.ModRev, s.Known = out.KV.ModRevision, true
	}
	s.Rev = out.Revision
	return s, true
}

func (s keyState) put(value, lease string, modRev int64, known bool) keyState {
	s.Exists, s.Value, s.Lease, s.ModRev, s.ModMax, s.Known = true, value, lease, modRev, 0, known
	return s
}

func (s keyState) deleted() keyState {
	s.Exists, s.Value, s.Lease, s.ModRev, s.ModMax, s.Known = false, "", "", 0, 0, true
	return s
}

// compare says which answers a txn's condition may have: true, false, or (when the key's mod
// revision is unknown) either.
func (s keyState) compare(c *Compare) (canTrue, canFalse bool) {
	if c.Value != nil {
		eq := s.Exists && s.Value == *c.Value
		return eq, !eq
	}
	want := *c.ModRevision
	switch {
	case !s.Exists:
		return want == 0, want != 0
	case s.Known:
		return s.ModRev == want, s.ModRev != want
	default:
		return want > s.ModRev && (s.ModMax == 0 || want <= s.ModMax), true
	}
}

// step is etcd's answer to one request, as a set of the states it may leave (none: the answer
// is impossible). out is nil when the outcome is unknown: the request took effect, since
// porcupine may place it after every other, which is the same as not at all.
func step(s keyState, in *Input, out *Output) []keyState {
	one := func(n keyState, ok bool) []keyState {
		if !ok {
			return nil
		}
		return []keyState{n}
	}
	switch in.Type {
	case "get":
		if out == nil {
			return []keyState{s}
		}
		return one(s.read(out))
	case "put":
		if in.Lease != "" && !s.hasLease(in.Lease) {
			return one(s, out == nil) // etcd refuses a put with a revoked lease
		}
		if out == nil {
			return []keyState{s.put(in.Value, in.Lease, s.Rev, false)}
		}
		n := s.put(in.Value, in.Lease, out.Revision, true)
		n.Rev = out.Revision
		return one(n, out.Revision > s.Rev)
	case "delete":
		if out == nil {
			return []keyState{s.deleted()}
		}
		if out.Deleted == 0 {
			return one(s.read(&Output{Revision: out.Revision}))
		}
		ok := out.Revision > s.Rev && out.KV != nil && s.matches(out.KV, out.Revision-1)
		n := s.deleted()
		n.Rev = out.Revision
		return one(n, ok)
	case "txn":
		canTrue, canFalse := s.compare(in.Compare)
		if out == nil {
			var r []keyState
			if canTrue {
				r = append(r, s.put(in.Value, "", s.Rev, false))
			}
			if canFalse {
				r = append(r, s)
			}
			return r
		}
		if !out.Succeeded {
			n, ok := s.read(out)
			return one(n, ok && canFalse)
		}
		n := s.put(in.Value, "", out.Revision, true)
		n.Rev = out.Revision
		return one(n, canTrue && out.Revision > s.Rev)
	case "leaseGrant":
		if out == nil {
			return []keyState{s}
		}
		return []keyState{s.withLease(out.Lease, true)}
	case "leaseRevoke":
		if !s.hasLease(in.Lease) {
			return one(s, out == nil) // etcd answers "lease not found"
		}
		n := s.withLease(in.Lease, false)
		if s.Exists && s.Lease == in.Lease {
			n = n.deleted()
		}
		return []keyState{n}
	}
	return nil
}

// kvModel is etcd's key-value store for porcupine: each key its own partition, a request's
// answer checked against every state the key may be in; with the rollback of `e`, if any.
func kvModel(e epochs) porcupine.Model {
	return (&porcupine.NondeterministicModel{
		Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
			byKey := map[string][]porcupine.Operation{}
			var keys []string
			for _, op := range history {
				k := op.Input.(*Input).Key
				if _, ok := byKey[k]; !ok {
					keys = append(keys, k)
				}
				byKey[k] = append(byKey[k], op)
			}
			out := make([][]porcupine.Operation, 0, len(keys))
			for _, k := range keys {
				out = append(out, byKey[k])
			}
			return out
		},
		Init: func() []interface{} {
			return []interface{}{keyState{content: content{Known: true}, SnapLo: e.Lo, SnapHi: e.Hi}}
		},
		Step: func(state, input, output interface{}) []interface{} {
			out, _ := output.(*Output)
			next := e.step(state.(keyState), input.(*Input), out)
			r := make([]interface{}, len(next))
			for i, n := range next {
				r[i] = n
			}
			return r
		},
		Hash: func(state interface{}) uint64 {
			h := fnv.New64a()
			fmt.Fprintf(h, "%+v", state)
			return h.Sum64()
		},
		DescribeOperation: func(input, output interface{}) string {
			in := input.(*Input)
			out, _ := output.(*Output)
			return describe(in, out)
		},
		DescribeState: func(state interface{}) string {
			s := state.(keyState)
			now := fmt.Sprintf("%s (rev >= %d)", describeContent(s.content), s.Rev)
			switch {
			case e.On && s.Epoch == 1:
				return now + ", rolled back"
			case e.On:
				return fmt.Sprintf("%s; the snapshot (rev %d..%d) holds %s", now, s.SnapLo, s.SnapHi, describeContent(s.AtSnap))
			}
			return now
		},
	}).ToModel()
}

func describe(in *Input, out *Output) string {
	req := fmt.Sprintf("%s(%s)", in.Type, in.Key)
	switch in.Type {
	case "put":
		req = fmt.Sprintf("put(%s, %s)", in.Key, in.Value)
		if in.Lease != "" {
			req = fmt.Sprintf("put(%s, %s, lease %s)", in.Key, in.Value, in.Lease)
		}
	case "txn":
		cond := ""
		if in.Compare.ModRevision != nil {
			cond = fmt.Sprintf("mod(%s) == %d", in.Key, *in.Compare.ModRevision)
		} else {
			cond = fmt.Sprintf("value(%s) == %s", in.Key, *in.Compare.Value)
		}
		req = fmt.Sprintf("if %s then put(%s, %s)", cond, in.Key, in.Value)
	case "leaseRevoke":
		req = fmt.Sprintf("revoke(%s)", in.Lease)
	case "rollback":
		return fmt.Sprintf("rollback to the snapshot, revisions from %d on", out.Revision)
	}
	if out == nil {
		return req + " -> unknown"
	}
	res := fmt.Sprintf("rev %d", out.Revision)
	switch {
	case in.Type == "leaseGrant":
		res = "lease " + out.Lease
	case in.Type == "leaseRevoke":
		res = "ok"
	case in.Type == "txn" && out.Succeeded:
		res = "succeeded, " + res
	case in.Type == "txn":
		res = "failed, " + res
	case in.Type == "delete":
		res = fmt.Sprintf("deleted %d, %s", out.Deleted, res)
	}
	if out.KV != nil && in.Type != "put" {
		res += fmt.Sprintf(", %s@%d", out.KV.Value, out.KV.ModRevision)
	} else if in.Type == "get" {
		res += ", absent"
	}
	return req + " -> " + res
}

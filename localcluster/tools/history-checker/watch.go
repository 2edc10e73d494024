package main

import (
	"fmt"
	"sort"
)

// written is a write as the history knows it: its revision when acknowledged (0: unknown).
type written struct {
	key      string
	revision int64
	failed   bool // a txn that answered that its condition was false
}

// writeRevision is the revision an answered operation wrote at (0: it wrote nothing).
func writeRevision(op Operation) int64 {
	if op.Output == nil {
		return 0
	}
	switch op.Input.Type {
	case "put":
		return op.Output.Revision
	case "txn":
		if op.Output.Succeeded {
			return op.Output.Revision
		}
	case "delete":
		if op.Output.Deleted > 0 {
			return op.Output.Revision
		}
	}
	return 0
}

// revisionOrder checks the revisions answered across keys against real time: two writes never
// share a revision, a write called after another operation returned has a higher revision than
// that one's, and a read (a get, a failed txn, a delete of nothing) one no lower.
func revisionOrder(ops []Operation) violations {
	type answered struct {
		call, ret, rev int64
		write          bool
		what           string
	}
	var list []answered
	byRevision := map[int64]string{}
	var problems violations
	for i, op := range ops {
		if op.Output == nil || op.Input.Type == "leaseGrant" || op.Input.Type == "leaseRevoke" {
			continue
		}
		rev := writeRevision(op)
		what := fmt.Sprintf("operation %d (%s)", i, describe(&op.Input, op.Output))
		if rev > 0 {
			if other, dup := byRevision[rev]; dup {
				problems.add("two writes at revision %d: %s and %s", rev, other, what)
			}
			byRevision[rev] = what
		}
		list = append(list, answered{op.Call, op.Return, op.Output.Revision, rev > 0, what})
	}
	byReturn := append([]answered(nil), list...)
	sort.Slice(byReturn, func(i, j int) bool { return byReturn[i].ret < byReturn[j].ret })
	sort.Slice(list, func(i, j int) bool { return list[i].call < list[j].call })
	var highest answered
	next := 0
	for _, b := range list {
		for ; next < len(byReturn) && byReturn[next].ret < b.call; next++ {
			if byReturn[next].rev > highest.rev {
				highest = byReturn[next]
			}
		}
		if b.rev < highest.rev || (b.write && b.rev == highest.rev) {
			problems.add("%s answered revision %d after %s had answered %d", b.what, b.rev, highest.what, highest.rev)
		}
	}
	return problems
}

// violations lists what a check found; past 50 they are counted, not listed.
type violations []string

func (v *violations) add(format string, args ...any) {
	if len(*v) == 50 {
		*v = append(*v, "(more not listed)")
	}
	if len(*v) <= 50 {
		*v = append(*v, fmt.Sprintf(format, args...))
	}
}

// WatchReport is what the watch checks found.
type WatchReport struct {
	Watchers int `json:"watchers"`
	// Complete counts the watchers the generator waited for until they had every acknowledged write.
	Complete int `json:"complete"`
	Events   int `json:"events"`
	Resumes  int `json:"resumes"`
	// Canceled counts the watches etcd canceled (a rollback's compaction).
	Canceled   int        `json:"canceled"`
	Violations violations `json:"violations"`
}

type eventKey struct {
	rev int64
	key string
}

// checkWatches checks each watcher's stream: revisions in order, no event twice, each event a
// write the history made (at the revision it was acknowledged at), no event another watcher saw
// missing from its range, and, for a watcher the generator waited for, every acknowledged write
// from its start revision on delivered. With a rollback (epochs.go), also: no event of the old
// epoch delivered after the rollback was answered, and no watch that delivered an event of a
// write the rollback lost goes on into the new epoch without being canceled; such a watch (one
// not canceled) owes no event of the revisions the rollback skipped.
func checkWatches(h *History, e epochs) WatchReport {
	r := WatchReport{Watchers: len(h.Watches), Violations: violations{}}
	writes := map[string]written{}
	for _, op := range h.Operations {
		if op.Input.Type == "put" || op.Input.Type == "txn" {
			w := written{key: op.Input.Key}
			if op.Output != nil {
				w.revision = writeRevision(op)
				w.failed = op.Input.Type == "txn" && !op.Output.Succeeded
			}
			writes[op.Input.Value] = w
		}
	}
	all := map[eventKey]Event{}
	for _, w := range h.Watches {
		for _, e := range w.Events {
			k := eventKey{e.ModRevision, e.Key}
			if seen, ok := all[k]; ok && (seen.Type != e.Type || seen.Value != e.Value) {
				r.Violations.add("watchers disagree at revision %d on %s: %s %q and %s %q", e.ModRevision, e.Key, seen.Type, seen.Value, e.Type, e.Value)
			}
			all[k] = e
		}
	}
	for _, w := range h.Watches {
		r.Events += len(w.Events)
		if w.Complete {
			r.Complete++
		}
		r.Resumes += w.Resumes
		if w.Canceled != nil {
			r.Canceled++
		}
		crossed := e.On && len(w.Events) > 0 && w.StartRevision < e.From && w.Events[len(w.Events)-1].ModRevision >= e.From
		checkEpochs(&r.Violations, w, e, crossed)
		got := map[eventKey]bool{}
		var last eventKey
		for i, e := range w.Events {
			k := eventKey{e.ModRevision, e.Key}
			switch {
			case got[k]:
				r.Violations.add("watcher %d: event %d (%s at revision %d) delivered twice", w.Watcher, i, e.Key, e.ModRevision)
			case e.ModRevision < last.rev:
				r.Violations.add("watcher %d: event %d at revision %d after one at %d", w.Watcher, i, e.ModRevision, last.rev)
			case e.ModRevision < w.StartRevision:
				r.Violations.add("watcher %d: event %d at revision %d, before the watch's start %d", w.Watcher, i, e.ModRevision, w.StartRevision)
			}
			got[k] = true
			last = k
			if e.Type != "put" {
				continue
			}
			wr, ok := writes[e.Value]
			switch {
			case !ok || wr.key != e.Key:
				r.Violations.add("watcher %d: event %d puts %s=%q, which no operation wrote", w.Watcher, i, e.Key, e.Value)
			case wr.failed:
				r.Violations.add("watcher %d: event %d puts %q, the value of a txn that answered it failed", w.Watcher, i, e.Value)
			case wr.revision != 0 && wr.revision != e.ModRevision:
				r.Violations.add("watcher %d: event %d puts %q at revision %d, acknowledged at %d", w.Watcher, i, e.Value, e.ModRevision, wr.revision)
			}
		}
		// What this watcher must have: every event from its start to its last (to the end when the
		// generator waited for it), as another watcher saw it or a write was acknowledged.
		skipped := func(rev int64) bool { return crossed && rev > e.Lo && rev < e.From }
		covers := func(rev int64) bool {
			return rev >= w.StartRevision && (w.Complete || rev <= last.rev) && !skipped(rev)
		}
		var missed []eventKey
		for k := range all {
			if covers(k.rev) && !got[k] {
				missed = append(missed, k)
			}
		}
		for _, op := range h.Operations {
			if rev := writeRevision(op); rev > 0 && covers(rev) && !got[eventKey{rev, op.Input.Key}] && all[eventKey{rev, op.Input.Key}].Type == "" {
				missed = append(missed, eventKey{rev, op.Input.Key})
			}
		}
		sort.Slice(missed, func(i, j int) bool { return missed[i].rev < missed[j].rev })
		for _, k := range missed {
			r.Violations.add("watcher %d: the event at revision %d on %s was not delivered (start %d, %d resumes)", w.Watcher, k.rev, k.key, w.StartRevision, w.Resumes)
		}
	}
	return r
}

// checkEpochs checks one watch against the rollback: after it was answered, only events of the
// new epoch; and a watch that reached the new epoch without a cancel had no event of a lost write.
func checkEpochs(problems *violations, w Watch, e epochs, crossed bool) {
	if !e.On {
		return
	}
	for i, ev := range w.Events {
		switch {
		case ev.ModRevision < e.From && ev.At > e.Answered:
			problems.add("watcher %d: event %d at revision %d, of the epoch before the rollback, delivered after the rollback was answered", w.Watcher, i, ev.ModRevision)
		case crossed && e.lost(ev.ModRevision):
			problems.add("watcher %d: event %d at revision %d, of a write the rollback lost, then events of the new epoch without a cancel", w.Watcher, i, ev.ModRevision)
		}
	}
}

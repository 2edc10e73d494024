package main

import "math"

// Rollback is a rollback in place during the recording (docs/reliability.md, "A rollback under
// the history"): the cluster's data became a snapshot's, and revisions went on from the
// snapshot's + Bump. SnapshotRevision is the member's revision as the snapshot began (the
// EtcdSnapshot's status.revision): the snapshot holds every write up to it and may hold a few
// made while it began. Asked is when the rollback was asked, Answered when it was seen done
// (Recovered True), on the operations' clock.
type Rollback struct {
	SnapshotRevision int64 `json:"snapshotRevision"`
	Bump             int64 `json:"bump"`
	Asked            int64 `json:"asked"`
	Answered         int64 `json:"answered"`
}

// epochs is the rollback as the model and the watch checks use it; On is false without one.
type epochs struct {
	On bool
	// Lo and Hi bound the snapshot's true revision: Lo the revision the snapshot began at, Hi the
	// lowest revision of the new epoch that any answer or event showed, less Bump (the restored
	// store begins at the snapshot's true revision + Bump).
	Lo, Hi, Bump int64
	// From is where the new epoch's revisions begin at the lowest: an answer below it is the old
	// epoch's, one at or past it the new one's.
	From     int64
	Answered int64
}

func epochsOf(h *History) epochs {
	rb := h.Rollback
	if rb == nil {
		return epochs{}
	}
	e := epochs{On: true, Lo: rb.SnapshotRevision, Hi: math.MaxInt64, Bump: rb.Bump, From: rb.SnapshotRevision + rb.Bump, Answered: rb.Answered}
	lowest := func(rev int64) {
		if rev >= e.From && rev-e.Bump < e.Hi {
			e.Hi = rev - e.Bump
		}
	}
	for _, op := range h.Operations {
		if op.Output != nil {
			lowest(op.Output.Revision)
		}
	}
	for _, w := range h.Watches {
		for _, ev := range w.Events {
			lowest(ev.ModRevision)
		}
	}
	return e
}

// lost says whether revision rev is certainly of a write the rollback lost: past the snapshot's
// highest possible revision, before the new epoch.
func (e epochs) lost(rev int64) bool { return e.On && rev > e.Hi && rev < e.From }

// step is the model's step with the rollback: the synthetic "rollback" operation (one per key,
// called when the rollback was asked and returned when it was answered) puts the key back as the
// snapshot holds it, revisions past the snapshot's + Bump; an answer belongs to the epoch its
// revision says; and before the rollback every change is placed before or after the snapshot.
func (e epochs) step(s keyState, in *Input, out *Output) []keyState {
	if !e.On {
		return step(s, in, out)
	}
	if in.Type == "rollback" {
		if s.Epoch != 0 {
			return nil
		}
		return []keyState{{Rev: s.SnapLo + e.Bump, content: s.AtSnap, Epoch: 1}}
	}
	if out != nil && (out.Revision >= e.From) != (s.Epoch == 1) {
		return nil
	}
	next := step(s, in, out)
	if s.Epoch == 1 || !changes(in, out) {
		return next
	}
	return e.track(s, in, out, next)
}

// changes says whether the request may change the key (reads and failed txns do not).
func changes(in *Input, out *Output) bool {
	switch in.Type {
	case "get":
		return false
	case "txn":
		return out == nil || out.Succeeded
	case "delete":
		return out == nil || out.Deleted > 0
	}
	return true
}

// track places each change in `next` before the snapshot (the snapshot holds it: AtSnap follows)
// or after it (lost by the rollback: AtSnap stays), or both ways while the snapshot's revision is
// not known well enough to tell, narrowing [SnapLo, SnapHi] by the choice. A write at revision r
// is held when the snapshot's revision is r or more; a lease grant or revoke answered at header
// revision h (it writes no revision of its own) when it is h or more, and lost when it is h or
// less. A change of unknown outcome took effect past the key's revision bound, when is unknown.
func (e epochs) track(s keyState, in *Input, out *Output, next []keyState) []keyState {
	lease := in.Type == "leaseGrant" || in.Type == "leaseRevoke"
	// A put or txn of unknown outcome leaves the mod revision unknown: held, it is the
	// snapshot's or below; lost, above the snapshot's.
	unknownWrite := out == nil && (in.Type == "put" || in.Type == "txn")
	heldFrom, lostUpTo := s.Rev+1, int64(math.MaxInt64)
	switch {
	case out != nil && lease:
		heldFrom, lostUpTo = out.Revision, out.Revision
	case out != nil:
		heldFrom, lostUpTo = out.Revision, out.Revision-1
	case lease:
		heldFrom = s.Rev
	}
	var r []keyState
	for _, n := range next {
		if n.content == s.content {
			r = append(r, n)
			continue
		}
		if held := n; max(held.SnapLo, heldFrom) <= held.SnapHi {
			held.SnapLo = max(held.SnapLo, heldFrom)
			if unknownWrite && !held.Known {
				held.ModMax = held.SnapHi
			}
			held.AtSnap = held.content
			r = append(r, held)
		}
		if lost := n; lost.SnapLo <= min(lost.SnapHi, lostUpTo) {
			lost.SnapHi = min(lost.SnapHi, lostUpTo)
			if unknownWrite && !lost.Known {
				lost.ModRev = max(lost.ModRev, lost.SnapLo)
			}
			r = append(r, lost)
		}
	}
	return r
}

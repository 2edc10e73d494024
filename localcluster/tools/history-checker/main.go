// history-checker checks a history of etcd client operations and watch events recorded by the
// e2e traffic (test/history/): linearizability with porcupine and an etcd key-value model, the
// revisions across keys against real time, and the watch guarantees. docs/reliability.md says
// what it proves and what it does not.
//
//	history-checker [-json] [-html FILE] [-timeout 5m] [HISTORY.json|-]
//
// Exit status: 0 every check passed; 1 a violation (porcupine's visualization written to the
// -html file when the history is not linearizable); 2 the input could not be read; 3 porcupine
// did not decide within the timeout.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/anishathalye/porcupine"
)

// Report is the verdict, printed as JSON with -json.
type Report struct {
	// Linearizable is porcupine's answer: Ok, Illegal or Unknown (timed out).
	Linearizable porcupine.CheckResult `json:"linearizable"`
	Operations   int                   `json:"operations"`
	Checked      int                   `json:"checked"`
	Unknown      int                   `json:"unknownOutcome"`
	Dropped      int                   `json:"dropped"`
	Keys         int                   `json:"keys"`
	Revisions    violations            `json:"revisionViolations"`
	Watch        WatchReport           `json:"watch"`
	// Rollback, with one: the bounds the history puts on the snapshot's revision (UpTo 0: none).
	Rollback   *SnapshotBounds `json:"rollback,omitempty"`
	Visualized string          `json:"visualization,omitempty"`
	Millis     int64           `json:"elapsedMs"`
}

func main() {
	asJSON := flag.Bool("json", false, "print the report as JSON")
	html := flag.String("html", "history-violation.html", "where porcupine's visualization goes when the history is not linearizable")
	timeout := flag.Duration("timeout", 5*time.Minute, "how long porcupine may search (0: no limit)")
	flag.Parse()
	var in io.Reader = os.Stdin
	if name := flag.Arg(0); name != "" && name != "-" {
		f, err := os.Open(name)
		if err != nil {
			fail(err)
		}
		defer f.Close()
		in = f
	}
	h, err := readHistory(in)
	if err != nil {
		fail(err)
	}
	os.Exit(check(h, *html, *timeout, *asJSON))
}

func check(h *History, html string, timeout time.Duration, asJSON bool) int {
	began := time.Now()
	e := epochsOf(h)
	model := kvModel(e)
	p := prepare(h, e)
	result, info := porcupine.CheckOperationsVerbose(model, p.Operations, timeout)
	r := Report{
		Linearizable: result,
		Operations:   len(h.Operations),
		Checked:      len(p.Operations) - p.Rollbacks,
		Unknown:      p.Unknown,
		Dropped:      p.Dropped,
		Keys:         len(model.Partition(p.Operations)),
		Revisions:    revisionOrder(h.Operations),
		Watch:        checkWatches(h, e),
	}
	if e.On {
		r.Rollback = &SnapshotBounds{From: e.Lo}
		if e.Hi != math.MaxInt64 {
			r.Rollback.UpTo = e.Hi
		}
	}
	if r.Revisions == nil {
		r.Revisions = violations{}
	}
	if result == porcupine.Illegal {
		if err := porcupine.VisualizePath(model, info, html); err != nil {
			fmt.Fprintf(os.Stderr, "history-checker: writing the visualization: %v\n", err)
		} else {
			r.Visualized = html
		}
	}
	r.Millis = time.Since(began).Milliseconds()
	if asJSON {
		_ = json.NewEncoder(os.Stdout).Encode(r)
	} else {
		printReport(r)
	}
	switch {
	case result == porcupine.Illegal || len(r.Revisions) > 0 || len(r.Watch.Violations) > 0:
		return 1
	case result == porcupine.Unknown:
		return 3
	}
	return 0
}

// SnapshotBounds is what a history says of its rollback's snapshot: its revision is From or more,
// and UpTo or less (the new epoch's lowest revision seen, less the bump).
type SnapshotBounds struct {
	From int64 `json:"snapshotRevisionFrom"`
	UpTo int64 `json:"snapshotRevisionUpTo,omitempty"`
}

func printReport(r Report) {
	verdict := map[porcupine.CheckResult]string{porcupine.Ok: "linearizable", porcupine.Illegal: "NOT linearizable", porcupine.Unknown: "undecided (timed out)"}[r.Linearizable]
	fmt.Printf("%s: %d operations checked on %d keys (%d recorded, %d of unknown outcome, %d of those left out), in %d ms\n",
		verdict, r.Checked, r.Keys, r.Operations, r.Unknown, r.Dropped, r.Millis)
	if r.Rollback != nil {
		fmt.Printf("rolled back in place to a snapshot at revision %d to %d\n", r.Rollback.From, r.Rollback.UpTo)
	}
	if r.Visualized != "" {
		fmt.Printf("porcupine's visualization: %s\n", r.Visualized)
	}
	fmt.Printf("revisions across keys: %d violations\n", len(r.Revisions))
	for _, v := range r.Revisions {
		fmt.Printf("  %s\n", v)
	}
	fmt.Printf("watch: %d watchers (%d waited for to the end), %d events, %d resumes, %d violations\n",
		r.Watch.Watchers, r.Watch.Complete, r.Watch.Events, r.Watch.Resumes, len(r.Watch.Violations))
	for _, v := range r.Watch.Violations {
		fmt.Printf("  %s\n", v)
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "history-checker: %v\n", err)
	os.Exit(2)
}

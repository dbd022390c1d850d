package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// errLimit stops a scan once --limit records are listed.
var errLimit = errors.New("limit reached")

// listCmd lists the records that match the filters.
func listCmd(ctx context.Context, args []string, s streams, e env) error {
	fs := newFlagSet("list", s, "[flags]")
	var t tableFlags
	t.register(fs, e)
	status := fs.String("status", "", "only these statuses, comma-separated: INPROGRESS, COMPLETED, UNKNOWN")
	stuck := fs.Bool("stuck", false, "only records that need a look: UNKNOWN, or in progress past their lease")
	olderThan := fs.Duration("older-than", 0, "only records created longer ago than this (e.g. 1h)")
	all := fs.Bool("all", false, "include expired records (the library treats them as absent; DynamoDB deletes them late)")
	segments := fs.Int("segments", 4, "parallel scan segments")
	limit := fs.Int("limit", 0, "stop after this many records (default: no limit)")
	asJSON := fs.Bool("json", false, "print one JSON object per line")
	if _, err := parse(fs, args, ""); err != nil {
		return err
	}
	want := map[lambdaidem.Status]bool{}
	if *status != "" {
		for _, st := range strings.Split(*status, ",") {
			st := lambdaidem.Status(strings.ToUpper(strings.TrimSpace(st)))
			switch st {
			case lambdaidem.StatusInProgress, lambdaidem.StatusCompleted, lambdaidem.StatusUnknown:
				want[st] = true
			default:
				return usagef("--status %q: want INPROGRESS, COMPLETED or UNKNOWN", st)
			}
		}
	}
	if *segments < 1 || *limit < 0 || *olderThan < 0 {
		return usagef("--segments must be at least 1; --limit and --older-than must not be negative")
	}
	r, err := t.open(ctx, e)
	if err != nil {
		return err
	}
	now := e.now()
	match := func(rec lambdaidem.Record) bool {
		switch {
		case !*all && !rec.Live(now):
			return false
		case len(want) > 0 && !want[rec.Status]:
			return false
		case *stuck && !(rec.Status == lambdaidem.StatusUnknown || (rec.Status == lambdaidem.StatusInProgress && rec.LeaseUntil.Before(now))):
			return false
		case *olderThan > 0 && (rec.CreatedAt.IsZero() || now.Sub(rec.CreatedAt) < *olderThan):
			return false
		}
		return true
	}
	tw := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
	if !*asJSON {
		fmt.Fprintln(tw, "STATUS\tAGE\tATTEMPTS\tLEASE\tRENEWED\tEXTERNAL\tREVISION\tRECORD")
	}
	enc := json.NewEncoder(s.out)
	listed, malformed := 0, 0
	lastProgress := e.now() // a first progress line only once a scan takes longer than progressEvery
	err = r.Scan(ctx, dynamostore.ScanOptions{
		Segments: *segments,
		Progress: func(p dynamostore.ScanProgress) {
			if t := e.now(); t.Sub(lastProgress) >= e.progressEvery {
				lastProgress = t
				fmt.Fprintf(s.err, "scanned %d items in %d pages, %d of %d segments done, %d listed\n", p.Items, p.Pages, p.SegmentsDone, p.Segments, listed)
			}
		},
		Malformed: func(key string, err error) {
			malformed++
			fmt.Fprintf(s.err, "skipped an item that is not a record (%s): %v\n", orDash(key), err)
		},
	}, func(rec lambdaidem.Record) error {
		if !match(rec) {
			return nil
		}
		listed++
		v := newView(rec, now, t.maxRunTime)
		if *asJSON {
			if err := enc.Encode(v); err != nil {
				return err
			}
		} else {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", rec.Status, age(rec, now), rec.Attempts, lease(rec, now), renewed(rec, now), yesNo(rec.External), v.Revision, rec.Key)
		}
		if *limit > 0 && listed >= *limit {
			return errLimit
		}
		return nil
	})
	if !*asJSON {
		tw.Flush()
	}
	if err != nil && !errors.Is(err, errLimit) {
		return err
	}
	fmt.Fprintf(s.err, "%d records listed", listed)
	if malformed > 0 {
		fmt.Fprintf(s.err, "; %d items skipped (not records)", malformed)
	}
	if errors.Is(err, errLimit) {
		fmt.Fprint(s.err, "; stopped at --limit")
	}
	fmt.Fprintln(s.err)
	return nil
}

func age(rec lambdaidem.Record, now time.Time) string {
	if rec.CreatedAt.IsZero() {
		return "-"
	}
	return now.Sub(rec.CreatedAt).Round(time.Second).String()
}

func lease(rec lambdaidem.Record, now time.Time) string {
	switch {
	case rec.Status != lambdaidem.StatusInProgress || rec.LeaseUntil.IsZero():
		return "-"
	case rec.LeaseUntil.Before(now):
		return "lapsed " + now.Sub(rec.LeaseUntil).Round(time.Second).String() + " ago"
	}
	return "for " + rec.LeaseUntil.Sub(now).Round(time.Second).String()
}

// renewed says how long ago the owner last renewed its lease.
func renewed(rec lambdaidem.Record, now time.Time) string {
	if rec.RenewedAt.IsZero() {
		return "-"
	}
	return now.Sub(rec.RenewedAt).Round(time.Second).String() + " ago"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

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
	"github.com/lambdaidem/lambdaidem/lambdaidem/emf"
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
	tenant := fs.String("tenant", "", "only the records of this Lambda tenant (tenant isolation mode: the tenant id the function was invoked with)")
	asEMF := fs.Bool("emf", false, "print, instead of the records, one CloudWatch embedded-metric-format line with UnknownAge: the age of the oldest UNKNOWN record (0 when there is none), for a scheduled job to alarm on; lists UNKNOWN records only")
	emfNamespace := fs.String("emf-namespace", "lambdaidem", "with --emf: the metrics namespace (emf.Options.Namespace of the functions)")
	emfService := fs.String("emf-service", "lambdaidem", "with --emf: the Service dimension (emf.Options.Service of a function that uses the table; the alarm watches it)")
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
	var metrics *emf.Metrics
	if *asEMF {
		if *limit > 0 || *asJSON || len(want) > 1 || (len(want) == 1 && !want[lambdaidem.StatusUnknown]) {
			return usagef("--emf reports the oldest UNKNOWN record of the whole table: it takes no --limit, --json or other --status")
		}
		want[lambdaidem.StatusUnknown] = true
		m, err := emf.New(s.out, func(o *emf.Options) { o.Namespace, o.Service, o.Now = *emfNamespace, *emfService, e.now })
		if err != nil {
			return usagef("--emf-namespace, --emf-service: %v", err)
		}
		metrics = m
	}
	scan := dynamostore.ScanOptions{Segments: *segments}
	if len(want) == 1 {
		for st := range want {
			scan.Status = st // DynamoDB filters the pages
		}
	}
	r, err := t.open(ctx, e)
	if err != nil {
		return err
	}
	now := e.now()
	match := func(rec lambdaidem.Record) bool {
		_, recTenant, _, _ := lambdaidem.SplitRecordKey(rec.Key)
		switch {
		case *tenant != "" && recTenant != *tenant:
			return false
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
	if !*asJSON && !*asEMF {
		fmt.Fprintln(tw, "STATUS\tAGE\tATTEMPTS\tLEASE\tRENEWED\tEXTERNAL\tREVISION\tRECORD")
	}
	enc := json.NewEncoder(s.out)
	listed, malformed := 0, 0
	var oldest lambdaidem.Record // the oldest UNKNOWN record listed
	lastProgress := e.now()      // a first progress line only once a scan takes longer than progressEvery
	scan.Progress = func(p dynamostore.ScanProgress) {
		if t := e.now(); t.Sub(lastProgress) >= e.progressEvery {
			lastProgress = t
			fmt.Fprintf(s.err, "scanned %d items in %d pages, %d of %d segments done, %d listed\n", p.Items, p.Pages, p.SegmentsDone, p.Segments, listed)
		}
	}
	scan.Malformed = func(key string, err error) {
		malformed++
		fmt.Fprintf(s.err, "skipped an item that is not a record (%s): %v\n", orDash(key), err)
	}
	err = r.Scan(ctx, scan, func(rec lambdaidem.Record) error {
		if !match(rec) {
			return nil
		}
		listed++
		if rec.Status == lambdaidem.StatusUnknown && !rec.CreatedAt.IsZero() && (oldest.CreatedAt.IsZero() || rec.CreatedAt.Before(oldest.CreatedAt)) {
			oldest = rec
		}
		v := newView(rec, now, t.maxRunTime)
		switch {
		case *asEMF:
		case *asJSON:
			if err := enc.Encode(v); err != nil {
				return err
			}
		default:
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", rec.Status, age(rec, now), rec.Attempts, lease(rec, now), renewed(rec, now), yesNo(rec.External), v.Revision, rec.Key)
		}
		if *limit > 0 && listed >= *limit {
			return errLimit
		}
		return nil
	})
	if !*asJSON && !*asEMF {
		tw.Flush()
	}
	if err != nil && !errors.Is(err, errLimit) {
		return err
	}
	var oldestAge time.Duration
	if !oldest.CreatedAt.IsZero() {
		oldestAge = now.Sub(oldest.CreatedAt)
	}
	if metrics != nil {
		metrics.WriteUnknownAge("scan", oldestAge)
	}
	fmt.Fprintf(s.err, "%d records listed", listed)
	if malformed > 0 {
		fmt.Fprintf(s.err, "; %d items skipped (not records)", malformed)
	}
	if errors.Is(err, errLimit) {
		fmt.Fprint(s.err, "; stopped at --limit")
	}
	fmt.Fprintln(s.err)
	if !oldest.CreatedAt.IsZero() {
		fmt.Fprintf(s.err, "the oldest UNKNOWN record listed is %s old: %s\n", oldestAge.Round(time.Second), oldest.Key)
	}
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

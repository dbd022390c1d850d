package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// resolveCmd settles an UNKNOWN record, fenced on what it read.
func resolveCmd(ctx context.Context, args []string, s streams, e env) error {
	fs := newFlagSet("resolve", s, "(--done OUTCOME | --not-done) [flags] RECORD-KEY")
	var t tableFlags
	t.register(fs, e)
	done := fs.Bool("done", false, "the effect happened: store the outcome; duplicates replay it")
	notDone := fs.Bool("not-done", false, "the effect did not happen and cannot happen any more: release the record; the next retry runs the operation")
	outcome := fs.String("outcome", "", "with --done: the handler's result as JSON (for API Gateway: {\"status\":201,\"header\":{...},\"body\":\"...\"})")
	outcomeFile := fs.String("outcome-file", "", "with --done: read the outcome JSON from this file")
	errType := fs.String("error-type", "", "with --done: store a terminal error of this type instead of a value")
	errMessage := fs.String("error-message", "", "with --error-type: its message")
	rev := fs.String("revision", "", "refuse unless the record is still at this revision (from show or list)")
	force := fs.Bool("force", false, "settle even while the record's owner may still be running or its call still land (prints what that risks)")
	retain := fs.Duration("retain", 24*time.Hour, "with --done: keep the completed record at least this long")
	rest, err := parse(fs, args, "record key")
	if err != nil {
		return err
	}
	if *done == *notDone {
		return usagef("give exactly one of --done and --not-done")
	}
	var res dynamostore.Resolution
	if *done {
		stored, err := outcomeFlags(*outcome, *outcomeFile, *errType, *errMessage)
		if err != nil {
			return err
		}
		res = dynamostore.Resolution{Done: true, Outcome: stored}
	} else if *outcome != "" || *outcomeFile != "" || *errType != "" || *errMessage != "" {
		return usagef("--not-done takes no outcome")
	}
	r, rec, err := openRecord(ctx, &t, e, rest[0], *rev)
	if err != nil {
		return err
	}
	res.Now = e.now()
	res.Force = *force
	if *force && r.Judge(rec, res.Now) == lambdaidem.VerdictHeld {
		fmt.Fprintf(s.err, "lambdaidem resolve: --force: the owner of %s may still be running, or its call still land, until %s.\n"+
			"  --not-done now lets the next retry run the effect again while the first may still happen: it may happen twice.\n"+
			"  --done now fences the owner out (it replays this outcome), but if its effect then fails, the stored outcome is wrong.\n",
			rec.Key, r.HoldUntil(rec).UTC().Format(time.RFC3339))
	}
	res.ExpiresAt = res.Now.Add(*retain)
	if err := r.Resolve(ctx, rec, res); err != nil {
		if errors.Is(err, dynamostore.ErrSealed) {
			return fmt.Errorf("%w: pass --kms-key with the KMS key the functions seal under, so the outcome is sealed as theirs are; nothing was written", err)
		}
		if errors.Is(err, lambdaidem.ErrKeyRefused) {
			return fmt.Errorf("%w (give --kms-key, --kms-context and --kms-previous-keys as the functions' IDEMPOTENCY_SEAL_* variables have them)", err)
		}
		return err
	}
	if *done {
		fmt.Fprintf(s.out, "resolved %s as done: COMPLETED; duplicates now replay the outcome\n", rec.Key)
	} else {
		fmt.Fprintf(s.out, "resolved %s as not done: released; the next retry runs the operation\n", rec.Key)
	}
	return nil
}

// outcomeFlags builds the stored outcome from resolve's flags.
func outcomeFlags(value, file, errType, errMessage string) ([]byte, error) {
	given := 0
	for _, s := range []string{value, file, errType} {
		if s != "" {
			given++
		}
	}
	if given != 1 {
		return nil, usagef("--done needs exactly one of --outcome, --outcome-file, --error-type")
	}
	if errMessage != "" && errType == "" {
		return nil, usagef("--error-message goes with --error-type")
	}
	o := lambdaidem.StoredOutcome{}
	switch {
	case errType != "":
		o.Err = &lambdaidem.ReplayedError{Type: errType, Message: errMessage}
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, usagef("--outcome-file: %v", err)
		}
		o.Value = b
	default:
		o.Value = json.RawMessage(value)
	}
	if o.Value != nil && !json.Valid(o.Value) {
		return nil, usagef("the outcome is not valid JSON: %.80q", string(o.Value))
	}
	b, err := lambdaidem.EncodeStoredOutcome(o)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return b, nil
}

// openRecord checks a record key, opens the table and reads the record;
// given a revision, it refuses a record at another one.
func openRecord(ctx context.Context, t *tableFlags, e env, key, rev string) (*dynamostore.Records, lambdaidem.Record, error) {
	if err := dynamostore.CheckRecordKey(key); err != nil {
		return nil, lambdaidem.Record{}, err
	}
	r, err := t.open(ctx, e)
	if err != nil {
		return nil, lambdaidem.Record{}, err
	}
	rec, err := r.Read(ctx, key)
	if err != nil {
		return nil, rec, err
	}
	if rev != "" && revision(rec) != rev {
		return nil, rec, fmt.Errorf("%w: %s is at revision %s, not %s: show it again", dynamostore.ErrRecordChanged, key, revision(rec), rev)
	}
	return r, rec, nil
}

// forgetCmd deletes a record after confirmation, fenced on what it read.
func forgetCmd(ctx context.Context, args []string, s streams, e env) error {
	fs := newFlagSet("forget", s, "[--yes] [flags] RECORD-KEY")
	var t tableFlags
	t.register(fs, e)
	yes := fs.Bool("yes", false, "do not ask for confirmation")
	force := fs.Bool("force", false, "forget even while the record's owner may still be running (prints what that risks)")
	rev := fs.String("revision", "", "refuse unless the record is still at this revision (from show or list)")
	rest, err := parse(fs, args, "record key")
	if err != nil {
		return err
	}
	r, rec, err := openRecord(ctx, &t, e, rest[0], *rev)
	if err != nil {
		return err
	}
	if !*yes {
		now := e.now()
		fmt.Fprintf(s.err, "record %s is %s (%s).\nForgetting it lets the next request with its key run the operation again.\nType 'forget' to delete it: ",
			rec.Key, rec.Status, state(rec, now, t.maxRunTime))
		line, _ := bufio.NewReader(s.in).ReadString('\n')
		if strings.TrimSpace(line) != "forget" {
			return errNotConfirmed
		}
	}
	now := e.now()
	if *force && r.Judge(rec, now) == lambdaidem.VerdictHeld {
		fmt.Fprintf(s.err, "lambdaidem forget: --force: the owner of %s may still be running until %s; forgetting it now lets the next retry run the operation while it does: its effect may happen twice.\n",
			rec.Key, r.HoldUntil(rec).UTC().Format(time.RFC3339))
	}
	if err := r.Forget(ctx, rec, dynamostore.Forgetting{Now: now, Force: *force}); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "forgot %s (was %s)\n", rec.Key, rec.Status)
	return nil
}

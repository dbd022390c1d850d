package main

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// showCmd prints one record.
func showCmd(ctx context.Context, args []string, s streams, e env) error {
	fs := newFlagSet("show", s, "[flags] RECORD-KEY")
	var t tableFlags
	t.register(fs, e)
	reveal := fs.Bool("reveal", false, "print the stored outcome (it may hold personal data)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	rest, err := parse(fs, args, "record key")
	if err != nil {
		return err
	}
	r, rec, err := openRecord(ctx, &t, e, rest[0], "")
	if err != nil {
		return err
	}
	v := newView(rec, e.now(), t.maxRunTime)
	if *reveal && len(rec.Outcome) > 0 {
		if err := v.reveal(ctx, r, rec); err != nil {
			return err
		}
	}
	if *asJSON {
		return json.NewEncoder(s.out).Encode(v)
	}
	v.print(s.out)
	return nil
}

// view is a record as an operator reads it, in text or JSON.
type view struct {
	Key string `json:"key"`
	// Tenant is the Lambda tenant the record belongs to (read from its
	// key, lambdaidem.SplitRecordKey); empty for a function without tenants.
	Tenant       string     `json:"tenant,omitempty"`
	Status       string     `json:"status"`
	State        string     `json:"state"`
	Revision     string     `json:"revision"`
	Attempts     int        `json:"attempts"`
	CreatedAt    *time.Time `json:"created_at,omitempty"`
	CompletedAt  *time.Time `json:"completed_at,omitempty"`
	LeaseUntil   *time.Time `json:"lease_until,omitempty"`
	ExpiresAt    time.Time  `json:"expires_at"`
	Expired      bool       `json:"expired"`
	External     bool       `json:"external"`
	DispatchedAt *time.Time `json:"dispatched_at,omitempty"`
	// DispatchWindow is the downstream's deduplication window ("24h0m0s"),
	// WindowPassed whether it has passed since the first dispatch.
	// RenewedAt is the owner's last renewal; Renews whether it renews
	// (recorded at claim); HeldUntil, while the owner may still be
	// running, until when (resolve and forget refuse until then).
	RenewedAt      *time.Time      `json:"renewed_at,omitempty"`
	Renews         bool            `json:"renews"`
	HeldUntil      *time.Time      `json:"held_until,omitempty"`
	DispatchWindow string          `json:"dispatch_window,omitempty"`
	WindowPassed   bool            `json:"window_passed,omitempty"`
	Fingerprint    string          `json:"fingerprint,omitempty"`
	OperationKey   string          `json:"operation_key"`
	OutcomeBytes   int             `json:"outcome_bytes"`
	Outcome        json.RawMessage `json:"outcome,omitempty"`
	Error          *storedError    `json:"error,omitempty"`

	now time.Time
}

type storedError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

func newView(rec lambdaidem.Record, now time.Time, window time.Duration) view {
	v := view{
		Key: rec.Key, Status: string(rec.Status), State: state(rec, now, window), Revision: revision(rec),
		Attempts: rec.Attempts, ExpiresAt: rec.ExpiresAt.UTC(), Expired: !rec.Live(now), External: rec.External,
		Fingerprint: rec.Fingerprint, OperationKey: lambdaidem.OperationKey(rec.Key), OutcomeBytes: len(rec.Outcome), now: now,
	}
	_, v.Tenant, _, _ = lambdaidem.SplitRecordKey(rec.Key)
	v.CreatedAt, v.CompletedAt = opt(rec.CreatedAt), opt(rec.CompletedAt)
	v.RenewedAt, v.Renews = opt(rec.RenewedAt), rec.Renews
	if lambdaidem.OwnerMayRun(rec, now, window) {
		v.HeldUntil = opt(lambdaidem.HoldUntil(rec, window))
	}
	v.DispatchedAt = opt(rec.DispatchedAt)
	if rec.DispatchWindow > 0 {
		v.DispatchWindow = rec.DispatchWindow.String()
		v.WindowPassed = lambdaidem.WindowPassed(rec.DispatchedAt, rec.DispatchWindow, now)
	}
	if rec.Status == lambdaidem.StatusInProgress {
		v.LeaseUntil = opt(rec.LeaseUntil) // a lease means nothing once the attempt has ended
	}
	return v
}

// reveal adds rec's outcome to v, opened with the --kms-key Sealer. A
// sealed outcome without one, or one the key service will not open, is an
// error: ciphertext is not the outcome.
func (v *view) reveal(ctx context.Context, r *dynamostore.Records, rec lambdaidem.Record) error {
	o, err := r.Outcome(ctx, rec)
	switch {
	case errors.Is(err, dynamostore.ErrSealed):
		return fmt.Errorf("%w: pass --kms-key with the KMS key the functions seal under (the role needs kms:Decrypt) to reveal it", err)
	case errors.Is(err, lambdaidem.ErrKeyRefused), errors.Is(err, lambdaidem.ErrKeyUnavailable):
		return err
	case err != nil:
		// Not an envelope: not written by lambdaidem. Show the raw text.
		v.Outcome, _ = json.Marshal(string(rec.Outcome))
	case o.Bin != nil:
		v.Outcome, _ = json.Marshal(map[string][]byte{"codec_bytes": o.Bin}) // a custom Codec's encoding, base64
	case o.Err != nil:
		v.Error = &storedError{Type: o.Err.Type, Message: o.Err.Message}
	default:
		v.Outcome = o.Value
	}
	return nil
}

func opt(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// state says in a few words what the record means now, as lambdaidem.Judge
// says (window: --max-run-time, for records written without a hold).
func state(rec lambdaidem.Record, now time.Time, window time.Duration) string {
	hold := lambdaidem.HoldUntil(rec, window).UTC().Format(time.RFC3339)
	switch v := lambdaidem.Judge(rec, now, window); {
	case v == lambdaidem.VerdictExpired:
		return "expired: treated as absent, the next request runs the operation"
	case v == lambdaidem.VerdictHeld && rec.Status == lambdaidem.StatusUnknown:
		return "outcome unknown, but its owner renewed and a call it made may still land until " + hold +
			": resolve refuses until then (--force risks that)"
	case v == lambdaidem.VerdictHeld && rec.LeaseUntil.Before(now):
		return "in progress: its lease lapsed, but its owner renews and may still be running until " + hold +
			": nothing takes it over, reconciles or settles it until then"
	case v == lambdaidem.VerdictHeld:
		return "in progress: an attempt holds it"
	case rec.Status == lambdaidem.StatusUnknown && lambdaidem.WindowPassed(rec.DispatchedAt, rec.DispatchWindow, now):
		return "outcome unknown, and the downstream's deduplication window has passed since the first dispatch: " +
			"reconciles may not redispatch (their \"not done\" is refused), so it waits for you: resolve --done if the effect happened; " +
			"--not-done lets the next retry dispatch again, which the downstream will no longer deduplicate"
	case rec.Status == lambdaidem.StatusUnknown:
		return "outcome unknown; settle it with resolve --done or --not-done"
	case v == lambdaidem.VerdictReplay:
		return "completed: duplicates replay the outcome"
	case v == lambdaidem.VerdictReconcile:
		return "stuck: its owner began an external effect, its lease lapsed and it cannot be running any more; as good as UNKNOWN, settle it with resolve"
	}
	return "stuck: lease lapsed and its owner cannot be running any more; the next retry takes it over"
}

// revision identifies the record's state as read: resolve and forget
// refuse, given --revision, a record that is no longer this one.
func revision(rec lambdaidem.Record) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%d\x00%d\x00%d\x00%t", rec.Status, rec.Token, rec.Attempts,
		rec.LeaseUntil.UnixMilli(), rec.ExpiresAt.Unix(), rec.External)
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))[:12]
}

func (v view) print(w io.Writer) {
	line := func(name, value string) { fmt.Fprintf(w, "%-14s %s\n", name, value) }
	line("record", v.Key)
	if v.Tenant != "" {
		line("tenant", v.Tenant)
	}
	line("status", v.Status+" ("+v.State+")")
	line("revision", v.Revision)
	line("attempts", fmt.Sprint(v.Attempts))
	line("created", v.when(v.CreatedAt))
	line("completed", v.when(v.CompletedAt))
	line("lease until", v.when(v.LeaseUntil))
	if v.Status == string(lambdaidem.StatusCompleted) {
		// The commit writes the record afresh: renewal concerns a running
		// attempt, and a completed record keeps none of it.
		line("renewal", "- (a completed record keeps no renewal: its attempt has ended)")
	} else {
		line("renewed", v.when(v.RenewedAt))
		line("owner renews", yesNo(v.Renews))
		line("held until", v.when(v.HeldUntil))
	}
	if v.ExpiresAt.IsZero() {
		line("expires", "- (never: it is kept until it is settled)")
	} else {
		line("expires", v.when(&v.ExpiresAt))
	}
	ext := "no"
	if v.External {
		ext = "yes: an external effect began; ask the downstream API about the operation key"
	}
	line("external", ext)
	if v.DispatchedAt != nil {
		d := "first " + v.when(v.DispatchedAt)
		switch {
		case v.DispatchWindow == "":
			d += "; no deduplication window given"
		case v.WindowPassed:
			d += "; the downstream deduplicates for " + v.DispatchWindow + ": PASSED, a redispatch could repeat the effect"
		default:
			d += "; the downstream deduplicates for " + v.DispatchWindow
		}
		line("dispatched", d)
	}
	line("fingerprint", orDash(v.Fingerprint))
	line("operation key", v.OperationKey)
	switch {
	case v.OutcomeBytes == 0:
		line("outcome", "-")
	case v.Error != nil:
		line("outcome", fmt.Sprintf("terminal error %s: %s", v.Error.Type, v.Error.Message))
	case v.Outcome != nil:
		line("outcome", string(v.Outcome))
	default:
		line("outcome", fmt.Sprintf("%d bytes, redacted (--reveal prints it)", v.OutcomeBytes))
	}
}

func (v view) when(t *time.Time) string {
	if t == nil {
		return "-"
	}
	d := t.Sub(v.now).Round(time.Second)
	rel := "in " + d.String()
	if d <= 0 {
		rel = (-d).String() + " ago"
	}
	return t.Format(time.RFC3339Nano) + " (" + rel + ")"
}

func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}

package model

import (
	"fmt"
	"strings"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// modelRec is the record the model prints after a write, a read or a TTL
// deletion (RECA in record.pml): r's fields, times in ticks.
type modelRec struct {
	st, tok, lease, exp, ext, ren, hold, fp, out int
}

// The model's record statuses (record.pml) and its "no TTL".
const (
	stAbsent    = 0
	stInProg    = 1
	stCompleted = 2
	stUnknown   = 3
	expNever    = 255 // INF
)

func (m modelRec) String() string {
	return fmt.Sprintf("st=%d tok=%d lease=%d exp=%d ext=%d ren=%d hold=%d fp=%d out=%d",
		m.st, m.tok, m.lease, m.exp, m.ext, m.ren, m.hold, m.fp, m.out)
}

// bijection pairs the model's values of one field (tokens, intents,
// outcomes: small numbers) with the code's (attempt tokens, fingerprints,
// outcome bytes) as they are seen: a model value met with two code values,
// or a code value with two model values, departs. The model's 0 is the
// code's "" (none).
type bijection struct {
	name string
	fwd  map[int]string
	back map[string]int
}

func newBijection(name string) *bijection {
	return &bijection{name: name, fwd: map[int]string{}, back: map[string]int{}}
}

func (b *bijection) match(m int, g string) string {
	if m == 0 || g == "" {
		if (m == 0) != (g == "") {
			return fmt.Sprintf("%s: the model's %d, the code's %q", b.name, m, short(g))
		}
		return ""
	}
	if prev, ok := b.fwd[m]; ok && prev != g {
		return fmt.Sprintf("%s: the model's %d was the code's %q, now %q", b.name, m, short(prev), short(g))
	}
	if prev, ok := b.back[g]; ok && prev != m {
		return fmt.Sprintf("%s: the code's %q was the model's %d, now %d", b.name, short(g), prev, m)
	}
	b.fwd[m], b.back[g] = g, m
	return ""
}

func short(s string) string {
	if len(s) > 24 {
		return s[:24] + "..."
	}
	return s
}

// recordCheck compares the stored item, read raw after an event, with the
// model's record: the status; the owner's token, the intent and whose
// outcome as classes (bijections); the lease, the hold, the TTL and the
// last renewal in exact ticks (the model's times are the code's: tick t is
// origin + (t-2) seconds, and 0 is none; the model's expiration INF is no
// TTL); the external mark. The model and the code compute every one of
// these times the same way (OwnerHold, ExpiryFor, the horizon from the
// committer's clock), so an exact comparison holds and is stronger than
// their order.
type recordCheck struct {
	origin        time.Time // the model's time 2
	tok, fp, outc *bijection
}

func newRecordCheck(origin time.Time) *recordCheck {
	return &recordCheck{origin: origin, tok: newBijection("token"), fp: newBijection("intent"), outc: newBijection("outcome")}
}

// at is the code's time of the model's tick t (0: none).
func (c *recordCheck) at(t int) time.Time {
	if t == 0 {
		return time.Time{}
	}
	return c.origin.Add(time.Duration(t-2) * tick)
}

// ticks shows a code time in the model's ticks.
func (c *recordCheck) ticks(t time.Time) string {
	if t.IsZero() {
		return "none"
	}
	d := t.Sub(c.origin)
	if d%tick != 0 {
		return fmt.Sprintf("%v (not a whole tick)", float64(d)/float64(tick)+2)
	}
	return fmt.Sprint(int(d/tick) + 2)
}

// compare returns what differs between the stored record rec (found: an
// item exists) and the model's m, "" if nothing does.
func (c *recordCheck) compare(m modelRec, rec lambdaidem.Record, found bool) string {
	var diffs []string
	add := func(format string, a ...any) { diffs = append(diffs, fmt.Sprintf(format, a...)) }
	status := map[int]lambdaidem.Status{stInProg: lambdaidem.StatusInProgress, stCompleted: lambdaidem.StatusCompleted,
		stUnknown: lambdaidem.StatusUnknown}
	switch {
	case m.st == stAbsent && found:
		add("the model has no record; the table holds %s", rec.Status)
	case m.st != stAbsent && !found:
		add("the model's record is %s; the table holds none", status[m.st])
	case m.st != stAbsent && rec.Status != status[m.st]:
		add("status: the model's %s, the table's %s", status[m.st], rec.Status)
	}
	if m.st == stAbsent || !found {
		return strings.Join(diffs, "; ")
	}
	for _, d := range []string{c.tok.match(m.tok, rec.Token), c.fp.match(m.fp, rec.Fingerprint), c.outc.match(m.out, string(rec.Outcome))} {
		if d != "" {
			add("%s", d)
		}
	}
	exp := m.exp
	if exp == expNever {
		exp = 0
	}
	times := []struct {
		name string
		m    int
		got  time.Time
	}{{"lease", m.lease, rec.LeaseUntil}, {"hold", m.hold, rec.HoldUntil}, {"renewed_at", m.ren, rec.RenewedAt},
		{"expiration", exp, rec.ExpiresAt}}
	for _, x := range times {
		if !x.got.Equal(c.at(x.m)) {
			want := fmt.Sprint(x.m)
			if x.m == 0 {
				want = "none"
			}
			add("%s: the model's %s, the table's %s", x.name, want, c.ticks(x.got))
		}
	}
	if rec.External != (m.ext == 1) {
		add("external: the model's %d, the table's %v", m.ext, rec.External)
	}
	return strings.Join(diffs, "; ")
}

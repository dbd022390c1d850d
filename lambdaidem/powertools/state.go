package powertools

import "time"

// State is what a Powertools record means to a request now.
type State int

// The states of a Powertools record.
const (
	// Absent: no record, or one Powertools itself would claim over (its
	// expiration passed, or INPROGRESS past its in_progress_expiration).
	Absent State = iota
	// InProgress: an INPROGRESS record within its in_progress_expiration
	// (or without one, until its expiration).
	InProgress
	// Completed: a COMPLETED record within its expiration: replay its data.
	Completed
)

// Record is the part of a Powertools record its state depends on.
type Record struct {
	Status string
	// Expiration is the expiration attribute, Unix seconds.
	Expiration int64
	// InProgressExpiration is in_progress_expiration, Unix milliseconds;
	// 0 when the record has none.
	InProgressExpiration int64
}

// Judge says what r means at now, by the rule Powertools' own claim
// applies (its condition: the key is free once expiration < now, or once
// an INPROGRESS record's in_progress_expiration < now in milliseconds).
// An unknown status is Absent to Powertools' claim too once expired, and
// InProgress before: nothing replays it, nothing runs over it.
func Judge(r Record, now time.Time) State {
	if r.Expiration < now.Unix() {
		return Absent
	}
	switch r.Status {
	case "COMPLETED":
		return Completed
	case "INPROGRESS":
		if r.InProgressExpiration != 0 && r.InProgressExpiration < now.UnixMilli() {
			return Absent
		}
	}
	return InProgress
}

package lambdaidem_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// A tool that settles a record by hand must store what a Guard would have
// committed: a duplicate then replays it as the handler's own result.
func TestStoredOutcomeIsWhatAGuardReplays(t *testing.T) {
	type receipt struct {
		ID     string `json:"id"`
		Amount int    `json:"amount"`
	}
	tests := []struct {
		name    string
		outcome lambdaidem.StoredOutcome
		want    receipt
		wantErr *lambdaidem.ReplayedError
	}{
		{"value", lambdaidem.StoredOutcome{Value: json.RawMessage(`{ "amount": 1250, "id": "pay_1" }`)}, receipt{ID: "pay_1", Amount: 1250}, nil},
		{"terminal error", lambdaidem.StoredOutcome{Err: &lambdaidem.ReplayedError{Type: "DeclinedError", Message: "card declined"}}, receipt{}, &lambdaidem.ReplayedError{Type: "DeclinedError", Message: "card declined"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			lambdaidem.Do(context.Background(), f.guard, call("k", "a"), chargeThenFail) // leaves the record UNKNOWN
			rec := f.onlyRecord(t)
			data, err := lambdaidem.EncodeStoredOutcome(tc.outcome)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok, err := f.store.Commit(context.Background(), lambdaidem.Commit{Key: rec.Key, Token: rec.Token, Fingerprint: rec.Fingerprint, Outcome: data, Now: f.clock.Now(), ExpiresAt: f.clock.Now().Add(time.Hour)}); !ok || err != nil {
				t.Fatalf("commit by hand: %v %v", ok, err)
			}
			c := lambdaidem.Call[receipt]{Operation: "Pay", Key: "k", Fingerprint: call("k", "a").Fingerprint}
			got, err := lambdaidem.Do(context.Background(), f.guard, c, func(context.Context) (receipt, error) {
				t.Fatal("the handler ran again")
				return receipt{}, nil
			})
			var replayed *lambdaidem.ReplayedError
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatalf("Do: %v", err)
			case tc.wantErr != nil && (!errors.As(err, &replayed) || *replayed != *tc.wantErr):
				t.Fatalf("Do error = %v; want %v", err, tc.wantErr)
			case got != tc.want:
				t.Fatalf("Do = %+v; want %+v", got, tc.want)
			}
			back, err := lambdaidem.DecodeStoredOutcome(data)
			if err != nil || (back.Err == nil) != (tc.outcome.Err == nil) {
				t.Fatalf("DecodeStoredOutcome = %+v, %v", back, err)
			}
		})
	}
}

func TestEncodeStoredOutcomeRefusesWhatNoGuardStores(t *testing.T) {
	for name, o := range map[string]lambdaidem.StoredOutcome{
		"neither":  {},
		"both":     {Value: json.RawMessage(`1`), Err: &lambdaidem.ReplayedError{Type: "E", Message: "m"}},
		"not JSON": {Value: json.RawMessage(`{"id":`)},
	} {
		if _, err := lambdaidem.EncodeStoredOutcome(o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestOperationKeyIsTheAttemptsDownstreamKey(t *testing.T) {
	f := newFixture(t)
	var seen string
	lambdaidem.Do(context.Background(), f.guard, call("k", "a"), func(ctx context.Context) (string, error) {
		a, _ := lambdaidem.AttemptFrom(ctx)
		seen = a.OperationKey()
		return "ok", nil
	})
	if got := lambdaidem.OperationKey(f.onlyRecord(t).Key); got != seen || got == "" {
		t.Fatalf("OperationKey(record key) = %q; the attempt used %q", got, seen)
	}
}

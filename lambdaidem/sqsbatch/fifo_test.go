package sqsbatch_test

import (
	"slices"
	"testing"
)

// FIFO (fifo.json: group A holds records 0, 1, 3; group B holds 2, 4): a
// failure in group A fails the rest of A without running it, and group B
// is processed.
func TestFIFOFailureStopsOnlyItsGroup(t *testing.T) {
	ev := loadEvent(t, "fifo.json")
	h := newOrders()
	h.fail[ev.Records[1].MessageId] = errDeclined
	s := newSetup(t, h.handle, nil)

	resp := s.invoke(t, ev)

	if got, want := failedIDs(resp), ids(ev, 1, 3); !slices.Equal(got, want) {
		t.Errorf("failures = %v, want %v", got, want)
	}
	wantRuns := map[int]int{0: 1, 1: 1, 2: 1, 3: 0, 4: 1}
	for i, want := range wantRuns {
		if got := h.ran(ev.Records[i].MessageId); got != want {
			t.Errorf("record %d ran %d times, want %d", i, got, want)
		}
	}
	if got := len(s.store.Items("orders")); got != 3 {
		t.Errorf("orders written = %d, want 3 (A's first, both of B)", got)
	}

	// SQS redelivers the group from its failed message on; now it succeeds.
	delete(h.fail, ev.Records[1].MessageId)
	if got := failedIDs(s.invoke(t, redeliver(ev, resp))); len(got) != 0 {
		t.Errorf("redelivery failures = %v, want none", got)
	}
	if got := len(s.store.Items("orders")); got != 5 {
		t.Errorf("orders written = %d, want 5", got)
	}
}

// Within a FIFO group, messages run in order, one at a time.
func TestFIFOGroupRunsInOrder(t *testing.T) {
	ev := loadEvent(t, "fifo.json")
	var order []string
	h := newOrders()
	s := newSetup(t, h.handle, nil)
	s.handler = mustWrapRecording(t, s, &order)

	if resp := s.invoke(t, ev); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures = %v", failedIDs(resp))
	}
	var groupA []string
	for _, id := range order {
		if slices.Contains(ids(ev, 0, 1, 3), id) {
			groupA = append(groupA, id)
		}
	}
	if want := ids(ev, 0, 1, 3); !slices.Equal(groupA, want) {
		t.Errorf("group A ran in order %v, want %v", groupA, want)
	}
}

package ddbtest

import "reflect"

// Backend is the DynamoDB implementation a [Proxy] fronts, and the
// departures from DynamoDB it really has. The proxy corrects a departure
// only where its backend has it: a correction applied to an endpoint that
// already answers as DynamoDB does would hide what that endpoint does.
type Backend struct {
	// Name names the backend in messages ("minidyn", "dynoxide").
	Name string
	// Departs lists the backend's own departures from DynamoDB, each field
	// set as [Emulator] sets it for minidyn. TestBackendDepartures probes
	// each one on every backend.
	Departs Departures
}

// Minidyn is the in-process emulator of [NewEmulator]
// (github.com/truora/minidyn v0.8.2): it has every departure [Emulator]
// lists.
func Minidyn() Backend { return Backend{Name: "minidyn", Departs: Emulator()} }

// Dynoxide is Dynoxide 1.2.1 (see [LaunchDynoxide]), an independent
// implementation of DynamoDB over SQLite. Of the departures the proxy
// corrects it has two. It executes one request at a time, so that writes
// never meet in flight: the proxy's transaction conflicts stay on. It
// charges a GetItem with a ProjectionExpression for the attributes it
// returns, where DynamoDB charges for the whole item: the proxy computes
// capacity (which also keeps [Proxy.Consumed], the ledger of every
// request). It returns old items for ALL_OLD, honours ClientRequestToken,
// returns no Attributes from PutItem, implements Time to Live's settings,
// REMOVE and parallel scan segments.
func Dynoxide() Backend {
	return Backend{Name: "dynoxide", Departs: Departures{OldItems: OldItemsLikeDynamoDB, NoTransactionConflicts: true, NoConsumedCapacity: true}}
}

// effective returns the departures the proxy lets through for a test that
// lets dep through, on backend b: a departure the backend does not have
// is let through (there is nothing to correct, and the backend's answer is
// DynamoDB's), one it has is corrected unless dep lets it through. An
// OldItems of OldItemsNever is kept on every backend: the proxy strips the
// old items itself. A backend with no name is minidyn.
func (b Backend) effective(dep Departures) Departures {
	if b.Name == "" {
		b = Minidyn()
	}
	out := dep
	if b.Departs.OldItems == OldItemsLikeDynamoDB && dep.OldItems != OldItemsNever {
		out.OldItems = OldItemsLikeEmulator // pass the backend's own (right) answer through
	}
	have := reflect.ValueOf(b.Departs)
	o := reflect.ValueOf(&out).Elem()
	for i := range o.NumField() {
		if f := o.Field(i); f.Kind() == reflect.Bool && !have.Field(i).Bool() {
			f.SetBool(true)
		}
	}
	return out
}

// honoursTokens reports whether the world the proxy shows, under the
// effective departures dep, answers a TransactWriteItems replayed with the
// ClientRequestToken of one that succeeded as DynamoDB does: because the
// proxy corrects it, or because the backend does it itself. The proxy
// remembers successful tokens in both cases, to tell a replay from a new
// transaction (for capacity, and for conflicts); it answers replays itself
// only in the first.
func (p *Proxy) honoursTokens(dep Departures) bool {
	return !dep.TokenReplayCancelled || !p.backend.Departs.TokenReplayCancelled
}

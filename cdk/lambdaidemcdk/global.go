package lambdaidemcdk

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/constructs-go/constructs/v10"
)

// GlobalTableProps makes the idempotency table a DynamoDB global table
// ([TableProps.Global], with [TableProps.V2]).
//
// # Which mode, and why
//
// The store supports one global-table mode: multi-Region eventual consistency
// (MREC) with every key homed in one Region. The DynamoDB developer guide
// ("Global tables – how it works", consistency modes; "Key facts about MREC"
// and "Key facts about MRSC" in the global-table design guide) says:
//
//   - MRSC (multi-Region strong consistency) evaluates a conditional write
//     against the latest version of the item in every Region, but "global
//     tables that use MRSC do not support the transaction APIs" and "Time to
//     live (TTL) is not supported for MRSC global tables". The store commits
//     the record and the handler's business writes in one TransactWriteItems
//     and forgets records through TTL, so an MRSC table cannot hold them:
//     [NewTable] refuses Consistency STRONG.
//   - MREC replicates asynchronously, resolves concurrent writes by "last
//     writer wins", and "conditional writes evaluate the condition expression
//     against the version of the item in the Region". A claim is one
//     conditional write, so it excludes other claims only in its own Region:
//     two Regions can both claim one key, both run the operation, and the
//     later record silently replaces the earlier one. Items written in one
//     transaction are replicated individually, too.
//
// # The routing rule
//
// Each idempotency key has one home Region, and every invocation that can
// claim, commit or read that key runs there (route by tenant, by key prefix,
// or send all writes to one primary Region: the "write to one Region" mode
// of the design guide). The other Regions hold replicas for failover only.
// Within its home Region a key's claim, fencing and atomic commit are exactly
// those of a single-Region table. When a key's home moves (an evacuation),
// records written in the old Region in the last ReplicationLatency (seconds;
// no SLA) may be missing in the new one, so a retry there can run the
// operation again: move the home only after the old Region's writes have
// drained and the longest lease has passed, or accept that window.
//
// [NewTable] refuses replicas unless HomeRegionRouting says the team follows
// this rule.
type GlobalTableProps struct {
	// Replicas are the Regions of the replica tables, besides the stack's own
	// Region (which must be concrete, not a token). At least one.
	Replicas []string
	// Consistency is the global table's mode. Default (and the only one
	// accepted) MultiRegionConsistency_EVENTUAL; STRONG is refused with
	// [ErrUnsafeGlobalTable].
	Consistency awsdynamodb.MultiRegionConsistency
	// HomeRegionRouting declares that every key is claimed, committed and read
	// in one home Region (see the routing rule above). Required: without it
	// the table is refused with [ErrUnsafeGlobalTable].
	HomeRegionRouting bool
}

// check refuses a global-table setup the construct cannot build or the store
// cannot use safely; a nil g is a single-Region table.
func (g *GlobalTableProps) check(scope constructs.Construct, key awskms.IKey) error {
	if g == nil {
		return nil
	}
	if g.Consistency == awsdynamodb.MultiRegionConsistency_STRONG {
		return fmt.Errorf("%w: multi-Region strong consistency (MRSC) does not support the transaction APIs "+
			"nor TTL, and the store commits in one TransactWriteItems and expires records through TTL: "+
			"use eventual consistency with home-Region routing (see GlobalTableProps)", ErrUnsafeGlobalTable)
	}
	if g.Consistency != "" && g.Consistency != awsdynamodb.MultiRegionConsistency_EVENTUAL {
		return fmt.Errorf("%w: unknown multi-Region consistency %q", ErrInvalidProps, g.Consistency)
	}
	if len(g.Replicas) == 0 {
		return fmt.Errorf("%w: Global needs at least one replica Region", ErrInvalidProps)
	}
	region := awscdk.Stack_Of(scope).Region()
	if isToken(*region) {
		return fmt.Errorf("%w: a global table needs a stack with a concrete Region (StackProps.Env), not a region-agnostic one",
			ErrInvalidProps)
	}
	seen := map[string]bool{*region: true}
	for _, r := range g.Replicas {
		switch {
		case r == "" || isToken(r):
			return fmt.Errorf("%w: replica Region %q must be a concrete Region name", ErrInvalidProps, r)
		case r == *region:
			return fmt.Errorf("%w: replica Region %s is the stack's own Region", ErrInvalidProps, r)
		case seen[r]:
			return fmt.Errorf("%w: replica Region %s appears twice", ErrInvalidProps, r)
		}
		seen[r] = true
	}
	if key != nil {
		return fmt.Errorf("%w: a customer-managed key on a global table needs a key per replica Region; "+
			"create the awsdynamodb.TableV2 yourself and adopt it with FromTable", ErrInvalidProps)
	}
	if !g.HomeRegionRouting {
		return fmt.Errorf("%w: with multi-Region eventual consistency a conditional claim is only Region-local, "+
			"so two Regions can both claim one key and both run the operation; route every key to one home Region "+
			"and set HomeRegionRouting (see GlobalTableProps)", ErrUnsafeGlobalTable)
	}
	return nil
}

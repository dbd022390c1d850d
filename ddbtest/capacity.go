package ddbtest

import (
	"maps"
	"math"
)

// Capacity units as DynamoDB charges them (DynamoDB developer guide,
// "DynamoDB read and write operations" (read-write-operations) and "Read/write
// capacity mode"; "Amazon DynamoDB Transactions: How it works", Capacity
// management for transactions). A KB is 1,024 bytes.
//
//   - A standard write (PutItem, UpdateItem, DeleteItem) costs 1 write unit
//     per started KB of the item, at least 1. PutItem and UpdateItem are
//     charged for the larger of the item before and after the write,
//     DeleteItem for the deleted item. "Item sizes for writes are rounded up
//     to the next 1 KB multiple."
//   - A conditional write whose condition fails "still consumes write
//     capacity units from the table", sized on the larger of the existing
//     item and the one the request tried to write; an absent item costs 1.
//   - A strongly consistent read costs 1 read unit per started 4 KB of the
//     item, at least 1; an eventually consistent read half of that. A read
//     of an item that does not exist still costs the minimum.
//   - A transaction performs "two underlying reads or writes of every item
//     in the transaction: one to prepare the transaction and one to commit
//     the transaction": 2 write units per started KB of each item it writes.
//     The capacity is consumed also when the transaction is cancelled by a
//     failed condition.
const (
	writeUnitBytes = 1024
	readUnitBytes  = 4096
)

// writeUnits is the write units of a standard write of an item of size
// bytes.
func writeUnits(size int) float64 {
	return math.Max(1, math.Ceil(float64(size)/writeUnitBytes))
}

// readUnits is the read units of a read of size bytes (one item, or the
// items of one Query or Scan page together).
func readUnits(size int, consistent bool) float64 {
	u := math.Max(1, math.Ceil(float64(size)/readUnitBytes))
	if !consistent {
		u /= 2
	}
	return u
}

// Capacity is an amount of capacity consumed, in DynamoDB's units (on an
// on-demand table, read and write request units).
type Capacity struct {
	// Read is read capacity units.
	Read float64
	// Write is write capacity units.
	Write float64
}

// Add returns c + d.
func (c Capacity) Add(d Capacity) Capacity {
	return Capacity{Read: c.Read + d.Read, Write: c.Write + d.Write}
}

// Consumption is the capacity the proxy charged, as DynamoDB would bill it:
// every request it served counts, also those that did not ask for
// ReturnConsumedCapacity and those that failed a condition (whose answer
// carries no ConsumedCapacity). Requests a fault refused before they
// reached the emulator (throttling, 5xx) consume nothing; a request whose
// answer a fault lost was applied, and counts.
type Consumption struct {
	// Total is the capacity of every request together.
	Total Capacity
	// ByTable is the capacity charged to each table.
	ByTable map[string]Capacity
	// ByOperation is the capacity of each operation ("PutItem",
	// "TransactWriteItems", …).
	ByOperation map[string]Capacity
}

// ledger accumulates a Consumption; guarded by Proxy.mu.
type ledger struct {
	byTable map[string]Capacity
	byOp    map[string]Capacity
	total   Capacity
}

func (l *ledger) charge(op string, byTable map[string]Capacity) {
	if l.byTable == nil {
		l.byTable, l.byOp = map[string]Capacity{}, map[string]Capacity{}
	}
	for table, c := range byTable {
		l.byTable[table] = l.byTable[table].Add(c)
		l.byOp[op] = l.byOp[op].Add(c)
		l.total = l.total.Add(c)
	}
}

// Consumed returns the capacity the proxy charged since it started or since
// the last ResetConsumed. See [Consumption] for what counts.
func (p *Proxy) Consumed() Consumption {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Consumption{Total: p.ledger.total, ByTable: maps.Clone(p.ledger.byTable), ByOperation: maps.Clone(p.ledger.byOp)}
}

// ResetConsumed sets the charged capacity to zero.
func (p *Proxy) ResetConsumed() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ledger = ledger{}
}

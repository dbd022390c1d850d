package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/lambdaidem/lambdaidem/ddbtest"
)

// capacityTargets are the targets of the capacity part.
func (rep *report) capacityTargets() []target {
	firstWhat := "write units, first request with one 1 KB business write (1 KB outcome)"
	firstGoal := "lambdaidem ≤ Powertools"
	storedWhat := "64 KB JSON outcome: write units of the stored record ÷ the record stored raw"
	storedGoal := "≤ 1/3"
	cr := rep.capacity
	if cr == nil || len(cr.runs) == 0 {
		return []target{{what: firstWhat, goal: firstGoal}, {what: storedWhat, goal: storedGoal}}
	}
	var ts []target
	run := cr.runs[0]
	pt, cf, op := run.row(scPowertools), run.row(scClaimFirst), run.row(scOptimistic)
	if pt != nil && cf != nil && op != nil {
		p, c, o := pt.perReq[capFirst].Write, cf.perReq[capFirst].Write, op.perReq[capFirst].Write
		ts = append(ts, target{what: firstWhat, goal: firstGoal,
			measured: fmt.Sprintf("optimistic %.2f, claim-first %.2f, Powertools %.2f", o, c, p),
			met:      o <= p && c <= p, known: true})
	} else {
		ts = append(ts, target{what: firstWhat, goal: firstGoal})
	}
	last := cr.runs[len(cr.runs)-1]
	st, raw := last.row(scClaimFirst), last.row(scUncompressed)
	if last.size == 64<<10 && st != nil && raw != nil && st.recordBytes > 0 && raw.recordBytes > 0 {
		s, r := writeUnits(st.recordBytes), writeUnits(raw.recordBytes)
		ts = append(ts, target{what: storedWhat, goal: storedGoal,
			measured: fmt.Sprintf("%.0f ÷ %.0f = %.3f (record %d bytes vs %d raw)", s, r, s/r, st.recordBytes, raw.recordBytes),
			met:      s/r <= 1.0/3, known: true})
	} else {
		ts = append(ts, target{what: storedWhat, goal: storedGoal})
	}
	return ts
}

// writeCapacity writes the capacity part.
func (rep *report) writeCapacity(b *strings.Builder) {
	cr := rep.capacity
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("## 5. Capacity units and cost per request\n\n")
	p("What DynamoDB bills. The endpoint is the one of part 1 (no added latency); `ddbtest`'s proxy computes the capacity of every request by DynamoDB's documented rules (developer guide: \"DynamoDB item sizes and formats\", \"DynamoDB read and write operations\", \"Amazon DynamoDB Transactions: How it works\"): item sizes from attribute names and values, 1 write unit per started KB of the larger of the item before and after a write (the item's whole size even for an `UpdateItem` of one attribute), a failed condition charged like the write it refused, 2 units per KB of each item of a `TransactWriteItems` (also when a condition cancels it), 1 read unit per started 4 KB of a strongly consistent read (half for an eventually consistent one). Its rules are tested against the guide's worked examples (`ddbtest/itemsize_test.go`, `ddbtest/consumed_test.go`). Every request counts, also those whose answer carries no `ConsumedCapacity` (a failed condition); the figures are the proxy's ledger (`Proxy.Consumed`), request by request.\n\n")
	p("Each first request writes one business item of %d bytes (as DynamoDB sizes it: 1 write unit on its own, 2 in a transaction) and returns a receipt that echoes the event's order lines (JSON shaped like an API response, `dev/bench/payload`: about 3× compressible at 64 KB, not a run of one character), so the stored outcome is about the given size. %d first requests, then %d duplicates of them, per scenario and size, one at a time; then %d concurrent duplicates of one new key (handler sleeping before its write), capacity divided by the invocations. The cached scenario's duplicates are cache hits. *claim-first, uncompressed* is claim-first with `NoCompression`: the record as stored before this change.\n\n",
		businessBytes, cr.requests, cr.requests, cr.contenders)
	p("Prices: on-demand, US East (N. Virginia), Standard table class: $%.3f per million write request units, $%.3f per million read request units, in effect since %s. *$/M* is the cost of a million such requests.\n\n", pricePerMWrites, pricePerMReads, priceDate)
	for _, run := range cr.runs {
		p("### %d KB outcome\n\n", run.size>>10)
		p("The receipt is %d bytes of JSON; the business item %d bytes.\n\n", run.outcomeBytes, run.businessBytes)
		p("| scenario | stored record bytes | first: WCU / RCU | $/M | completed duplicate: WCU / RCU | $/M | concurrent duplicates: WCU / RCU | $/M | by operation, first request | errors |\n")
		p("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |\n")
		for _, row := range run.rows {
			rec := "–"
			if row.recordBytes > 0 {
				rec = fmt.Sprintf("%d", row.recordBytes)
			}
			p("| %s | %s | %s | %.2f | %s | %.2f | %s | %.2f | %s | %d |\n", row.scenario, rec,
				units(row.perReq[capFirst]), costPerMillion(row.perReq[capFirst]),
				units(row.perReq[capDuplicate]), costPerMillion(row.perReq[capDuplicate]),
				units(row.perReq[capConcurrent]), costPerMillion(row.perReq[capConcurrent]),
				capacityByOp(row.byOp[capFirst]), row.errors)
		}
		if pt, cf, op := run.row(scPowertools), run.row(scClaimFirst), run.row(scOptimistic); pt != nil && cf != nil && op != nil {
			ratio := func(a, b ddbtest.Capacity) string {
				if costPerMillion(b) == 0 {
					return "–"
				}
				return fmt.Sprintf("%.2f×", costPerMillion(a)/costPerMillion(b))
			}
			p("\nCost ÷ Powertools: first request claim-first %s, optimistic %s; completed duplicate claim-first %s, optimistic %s",
				ratio(cf.perReq[capFirst], pt.perReq[capFirst]), ratio(op.perReq[capFirst], pt.perReq[capFirst]),
				ratio(cf.perReq[capDuplicate], pt.perReq[capDuplicate]), ratio(op.perReq[capDuplicate], pt.perReq[capDuplicate]))
			if ca := run.row(scCached); ca != nil {
				p(", cache hit %s", ratio(ca.perReq[capDuplicate], pt.perReq[capDuplicate]))
			}
			p(".\n\n")
		}
	}
}

// capacityByOp lists capacity by operation: "TransactWriteItems 4.00 W".
func capacityByOp(ops map[string]ddbtest.Capacity) string {
	var parts []string
	for _, op := range slices.Sorted(maps.Keys(ops)) {
		c := ops[op]
		s := op
		if c.Write > 0 {
			s += fmt.Sprintf(" %.2f W", c.Write)
		}
		if c.Read > 0 {
			s += fmt.Sprintf(" %.2f R", c.Read)
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// capacityAnalysis explains the capacity figures, computed from this run.
func (rep *report) capacityAnalysis() []string {
	cr := rep.capacity
	if cr == nil || len(cr.runs) == 0 {
		return nil
	}
	var notes []string
	small, large := cr.runs[0], cr.runs[len(cr.runs)-1]
	pt, cf, op := small.row(scPowertools), small.row(scClaimFirst), small.row(scOptimistic)
	if pt != nil && cf != nil && op != nil {
		ptL, cfL := large.row(scPowertools), large.row(scClaimFirst)
		crossover := ""
		for _, run := range cr.runs {
			p, c := run.row(scPowertools), run.row(scClaimFirst)
			if p != nil && c != nil && c.perReq[capFirst].Write < p.perReq[capFirst].Write && crossover == "" {
				crossover = fmt.Sprintf("%d KB", run.size>>10)
			}
		}
		note := fmt.Sprintf("**Capacity: the first request at 1 KB costs more than Powertools', by design; from larger outcomes on, less.** "+
			"With an outcome of %d bytes Powertools' first request costs %.2f write units (three standard writes of items under 1 KB: the INPROGRESS `PutItem`, the business `PutItem`, the completing `UpdateItem`); lambdaidem optimistic %.2f and claim-first %.2f. "+
			"The difference is the atomic commit (the record and the business items commit in one transaction): DynamoDB charges a transaction 2 units per KB of each item, so the business item that costs Powertools 1 unit costs 2 inside the `TransactWriteItems` that also completes the record, and claim-first adds its 1-unit claim. "+
			"No encoding closes it: both items are already under 1 KB (the record is %d bytes, its outcome compressed); it is the price of the guarantee part 4 measures (no duplicate business write after a crash between the business write and the commit). ",
			small.outcomeBytes, pt.perReq[capFirst].Write, op.perReq[capFirst].Write, cf.perReq[capFirst].Write, cf.recordBytes)
		if ptL != nil && cfL != nil {
			note += fmt.Sprintf("Stored outcomes set the rest: at %d KB Powertools' record is %d bytes (it stores the result as a DynamoDB map, whose JSON punctuation is not counted) and lambdaidem's %d (gzip), so a first request costs claim-first %.2f units against %.2f",
				large.size>>10, ptL.recordBytes, cfL.recordBytes, cfL.perReq[capFirst].Write, ptL.perReq[capFirst].Write)
			if crossover != "" {
				note += fmt.Sprintf("; lambdaidem is the cheaper from the %s outcome of this run on", crossover)
			}
			note += ". "
		}
		note += fmt.Sprintf("A completed duplicate costs claim-first what Powertools pays at 1 KB (%.2f against %.2f: each is one conditional write that fails, charged for the existing record), and a cache hit nothing.",
			cf.perReq[capDuplicate].Write, pt.perReq[capDuplicate].Write)
		notes = append(notes, note)
		notes = append(notes, fmt.Sprintf("**Capacity: optimistic duplicates pay a whole transaction.** A duplicate in optimistic mode learns it is one from its cancelled `TransactWriteItems`, and DynamoDB charges a cancelled transaction as if it had run: %.2f units at 1 KB and %.2f at %d KB, against claim-first's %.2f and %.2f. "+
			"Where duplicates are frequent, claim-first or the local cache (`CacheSize`, 0 units on a warm instance) is the cheaper choice; the README says so.",
			op.perReq[capDuplicate].Write, large.row(scOptimistic).perReq[capDuplicate].Write, large.size>>10, cf.perReq[capDuplicate].Write, large.row(scClaimFirst).perReq[capDuplicate].Write))
	}
	if note := rep.compressionCPU(); note != "" {
		notes = append(notes, note)
	}
	if st, raw := large.row(scClaimFirst), large.row(scUncompressed); st != nil && raw != nil {
		notes = append(notes, fmt.Sprintf("**Capacity: compression.** At %d KB the record stored raw is %d bytes (%.0f write units, %.0f in the commit transaction) and %d bytes compressed (%.0f, %.0f): a first request costs %.2f units instead of %.2f and a completed duplicate %.2f instead of %.2f. "+
			"Stored outcomes are gzip (standard library: Huffman coding only up to 2 KB, level 1 up to 8 KB, level 6 above; `BenchmarkCompression` in part 2 has the ratio and CPU of each level on the same JSON).",
			large.size>>10, raw.recordBytes, writeUnits(raw.recordBytes), 2*writeUnits(raw.recordBytes), st.recordBytes, writeUnits(st.recordBytes), 2*writeUnits(st.recordBytes),
			st.perReq[capFirst].Write, raw.perReq[capFirst].Write, st.perReq[capDuplicate].Write, raw.perReq[capDuplicate].Write))
	}
	return notes
}

// compressionCPU says what compression costs the wrapper, from the micro
// benchmarks of this run: each compressed row beside its uncompressed twin
// (same binary, same runs, so the load of the machine hits both alike).
func (rep *report) compressionCPU() string {
	var parts []string
	for _, pair := range [][2]string{
		{"First/claim-first/1KB", "First/claim-first-uncompressed/1KB"},
		{"Replay/store/1KB", "Replay/store-uncompressed/1KB"},
		{"First/claim-first/64KB", "First/claim-first-uncompressed/64KB"},
		{"Replay/store/64KB", "Replay/store-uncompressed/64KB"},
	} {
		c, ok1 := rep.micro1(pair[0])
		u, ok2 := rep.micro1(pair[1])
		if !ok1 || !ok2 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %.1f µs against %.1f µs uncompressed (fastest runs %.1f and %.1f), %.0f allocs against %.0f",
			pair[0], c.nsPerOp/1000, u.nsPerOp/1000, c.minNsPerOp/1000, u.minNsPerOp/1000, c.allocsPerOp, u.allocsPerOp))
	}
	if len(parts) == 0 {
		return ""
	}
	note := "**Compression's CPU.** " + strings.Join(parts, "; ") + "."
	if cr := rep.capacity; cr != nil && len(cr.runs) > 0 {
		st, raw := cr.runs[0].row(scClaimFirst), cr.runs[0].row(scUncompressed)
		if st != nil && raw != nil {
			first := raw.perReq[capFirst].Write - st.perReq[capFirst].Write
			dup := raw.perReq[capDuplicate].Write - st.perReq[capDuplicate].Write
			note += fmt.Sprintf(" With the %d-byte outcome of part 5, compression saves %.2f write units of a claim-first first request and %.2f of a completed duplicate: $%.3f and $%.3f per million requests at the prices of part 5, against those microseconds of Lambda CPU (a millisecond of a 1,769 MB function, one vCPU, costs about $0.03 per million).",
				cr.runs[0].outcomeBytes, first, dup, first*pricePerMWrites, dup*pricePerMWrites)
		}
	}
	return note + " `NoCompression` or a higher `CompressAbove` turns it off for a function that prefers the microseconds."
}

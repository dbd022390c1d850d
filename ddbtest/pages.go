package ddbtest

import (
	"net/http"
	"strconv"
)

// A Scan or Query page (API Reference, Scan and Query; Developer Guide,
// "Paginating table query results" and "Counting the items in the
// results"):
//
//   - reads at most Limit items, or "a maximum of 1 MB of data", and then
//     applies the FilterExpression; when it stopped before the end it
//     returns LastEvaluatedKey;
//   - returns Count (the items after the filter) and ScannedCount (the
//     items read, before the filter);
//   - with Select COUNT returns the counts and no items.
//
// minidyn honours Limit as DynamoDB does (it counts the items read, before
// the filter) but has no 1 MB page, no ScannedCount, and returns items for
// COUNT. The proxy finds where DynamoDB's page would stop: it reads the
// page without filter or projection (the items as stored, which the 1 MB
// counts by itemsize.go) and, when 1 MB of them ends before the page does,
// asks the emulator again with Limit set to the items that fit: the page
// ends before the item that would take it over 1 MB (as Dynoxide's does;
// the documentation does not say which side of the limit that item falls). (A page without filter, projection
// or Select is read once, and again only when it is over 1 MB.)

// maxPageSize is the most a Scan or Query page reads.
const maxPageSize = 1024 * 1024

// page serves a Scan or Query, with the parallel scan segments of
// segments.go unless dep keeps them ignored.
func (p *Proxy) page(dep Departures, op string, header http.Header, body []byte) response {
	in, err := object(body)
	if err != nil || (dep.NoPageLimit && dep.NoScanCounts && (dep.ScanSegmentsIgnored || op == "Query")) {
		return p.call(op, header, body)
	}
	seg := noSegment
	if op == "Scan" && !dep.ScanSegmentsIgnored {
		var refusal *response
		if seg, refusal = segmentOf(in); refusal != nil {
			return *refusal
		}
	}
	countOnly := !dep.NoScanCounts && text(in["Select"]) == "COUNT"
	fwd := edit(body, func(m map[string][]byte) {
		if seg.total > 0 {
			delete(m, "Segment")
			delete(m, "TotalSegments")
		}
		if countOnly {
			delete(m, "Select")
		}
	})
	table := text(in["TableName"])
	_, filtered := in["FilterExpression"]
	_, projected := in["ProjectionExpression"]
	_, selected := in["Select"]
	simple := !filtered && !projected && !selected && seg.total == 0
	scanned := -1 // unknown until a read without filter says it
	if (!dep.NoPageLimit || !dep.NoScanCounts) && !simple {
		raw := p.call(op, header, keyConditionOnly(fwd))
		if raw.status != http.StatusOK {
			return raw
		}
		n, kept, cut := p.fit(dep, table, raw.body, seg)
		if cut {
			fwd = withLimit(fwd, n)
		}
		scanned = kept
		if cut {
			scanned++
		}
	}
	cutScanned := 0 // the item read that would have taken the page over 1 MB
	resp := p.call(op, header, fwd)
	if resp.status != http.StatusOK {
		return resp
	}
	if simple && !dep.NoPageLimit {
		if n, _, cut := p.fit(dep, table, resp.body, seg); cut {
			cutScanned = 1
			if resp = p.call(op, header, withLimit(fwd, n)); resp.status != http.StatusOK {
				return resp
			}
		}
	}
	resp.body = edit(resp.body, func(m map[string][]byte) {
		items := list(m["Items"])
		if seg.total > 0 {
			var kept [][]byte
			for _, item := range items {
				if seg.holds(p.keyOf(table, item)) {
					kept = append(kept, item)
				}
			}
			items = kept
		}
		if items == nil {
			items = [][]byte{}
		}
		m["Items"] = marshal(items)
		m["Count"] = []byte(strconv.Itoa(len(items)))
		if !dep.NoScanCounts {
			if scanned < 0 {
				scanned = len(items)
			}
			m["ScannedCount"] = []byte(strconv.Itoa(scanned + cutScanned))
		}
		if countOnly {
			delete(m, "Items")
		}
	})
	return resp
}

// fit walks the items of a page as read (body, an answer without filter
// or projection) and returns how many of them DynamoDB's page would have
// read (n), how many of those are in seg (kept), and whether the 1 MB
// ends the page before its items do (cut).
func (p *Proxy) fit(dep Departures, table string, body []byte, seg segment) (n, kept int, cut bool) {
	out, err := object(body)
	if err != nil {
		return 0, 0, false
	}
	items := list(out["Items"])
	size := 0
	for i, item := range items {
		if seg.total > 0 && !seg.holds(p.keyOf(table, item)) {
			continue
		}
		s, _ := itemSize(item)
		if size += s; !dep.NoPageLimit && size > maxPageSize && i > 0 {
			return i, kept, true
		}
		kept++
	}
	return len(items), kept, false
}

// The ScannedCount of a page that 1 MB ended counts the item that would
// have taken it over, which DynamoDB read but does not return (as Dynoxide
// counts; the documentation says only "the number of items evaluated").

// withLimit is a Scan or Query body with Limit n.
func withLimit(body []byte, n int) []byte {
	return edit(body, func(m map[string][]byte) { m["Limit"] = []byte(strconv.Itoa(n)) })
}

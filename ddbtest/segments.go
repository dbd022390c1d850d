package ddbtest

import (
	"fmt"
	"hash/fnv"
	"net/http"
	"strconv"
)

// scanSegment serves a Scan with DynamoDB's parallel scan semantics
// (DynamoDB developer guide, "Parallel scan"; API reference, Scan:
// Segment and TotalSegments): TotalSegments splits the table into
// disjoint segments, every item belongs to exactly one, and a Scan with
// Segment s returns only the items of segment s. Both parameters are given
// together or not at all, TotalSegments is 1 to 1,000,000 and Segment is
// 0 to TotalSegments-1; otherwise the request fails with a
// ValidationException.
//
// The emulator ignores both parameters. The proxy lets it page through the
// whole table as usual and keeps, in each page, the items of the requested
// segment (by a hash of the item's key), so a page may come back smaller
// than Limit, or empty with a LastEvaluatedKey, as DynamoDB's own pages
// can.
func (p *Proxy) scanSegment(header http.Header, body []byte) response {
	in, err := object(body)
	if err != nil {
		return p.call("Scan", header, body)
	}
	segRaw, hasSeg := in["Segment"]
	totalRaw, hasTotal := in["TotalSegments"]
	if !hasSeg && !hasTotal {
		return p.call("Scan", header, body)
	}
	seg, segErr := strconv.Atoi(string(segRaw))
	total, totalErr := strconv.Atoi(string(totalRaw))
	switch {
	case hasSeg != hasTotal:
		return errorResponse(http.StatusBadRequest, "ValidationException", "The TotalSegments parameter and the Segment parameter must be given together")
	case segErr != nil || totalErr != nil || total < 1 || total > 1_000_000:
		return errorResponse(http.StatusBadRequest, "ValidationException", "TotalSegments must be between 1 and 1000000")
	case seg < 0 || seg >= total:
		return errorResponse(http.StatusBadRequest, "ValidationException", fmt.Sprintf("Segment %d must be less than TotalSegments %d", seg, total))
	}
	table := text(in["TableName"])
	resp := p.call("Scan", header, edit(body, func(m map[string][]byte) {
		delete(m, "Segment")
		delete(m, "TotalSegments")
	}))
	if resp.status != http.StatusOK {
		return resp
	}
	resp.body = edit(resp.body, func(m map[string][]byte) {
		var kept [][]byte
		for _, item := range list(m["Items"]) {
			if segmentOf(p.keyOf(table, item), total) == seg {
				kept = append(kept, item)
			}
		}
		if kept == nil {
			kept = [][]byte{}
		}
		m["Items"] = marshal(kept)
		m["Count"] = []byte(strconv.Itoa(len(kept)))
	})
	return resp
}

// segmentOf assigns an item, by its key, to one of total segments.
func segmentOf(key []byte, total int) int {
	h := fnv.New32a()
	h.Write([]byte(canonical(key)))
	return int(h.Sum32() % uint32(total))
}

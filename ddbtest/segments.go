package ddbtest

import (
	"fmt"
	"hash/fnv"
	"net/http"
	"strconv"
)

// DynamoDB's parallel scan (DynamoDB developer guide, "Parallel scan"; API
// reference, Scan: Segment and TotalSegments): TotalSegments splits the
// table into disjoint segments, every item belongs to exactly one, and a
// Scan with Segment s returns only the items of segment s. Both parameters
// are given together or not at all, TotalSegments is 1 to 1,000,000 and
// Segment is 0 to TotalSegments-1; otherwise the request fails with a
// ValidationException.
//
// The emulator ignores both parameters. The proxy lets it page through the
// whole table as usual and keeps, in each page, the items of the requested
// segment (by a hash of the item's key), so a page may come back smaller
// than Limit, or empty with a LastEvaluatedKey, as DynamoDB's own pages
// can (pages.go serves the Scan).

// segment is the part of a parallel scan one Scan asks for; total 0 for a
// whole-table scan.
type segment struct{ index, total int }

var noSegment = segment{}

// segmentOf reads the segment a Scan (in) asks for, or the refusal
// DynamoDB answers.
func segmentOf(in map[string][]byte) (segment, *response) {
	segRaw, hasSeg := in["Segment"]
	totalRaw, hasTotal := in["TotalSegments"]
	if !hasSeg && !hasTotal {
		return noSegment, nil
	}
	seg, segErr := strconv.Atoi(string(segRaw))
	total, totalErr := strconv.Atoi(string(totalRaw))
	var r response
	switch {
	case hasSeg != hasTotal:
		r = errorResponse(http.StatusBadRequest, "ValidationException", "The TotalSegments parameter and the Segment parameter must be given together")
	case segErr != nil || totalErr != nil || total < 1 || total > 1_000_000:
		r = errorResponse(http.StatusBadRequest, "ValidationException", "TotalSegments must be between 1 and 1000000")
	case seg < 0 || seg >= total:
		r = errorResponse(http.StatusBadRequest, "ValidationException", fmt.Sprintf("Segment %d must be less than TotalSegments %d", seg, total))
	default:
		return segment{index: seg, total: total}, nil
	}
	return noSegment, &r
}

// holds reports whether the item of this key is in the segment.
func (s segment) holds(key []byte) bool {
	h := fnv.New32a()
	h.Write([]byte(canonical(key)))
	return int(h.Sum32()%uint32(s.total)) == s.index
}

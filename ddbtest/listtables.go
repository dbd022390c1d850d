package ddbtest

import (
	"encoding/json"
	"net/http"
	"sort"
)

// ListTables returns the names of the tables, in name order, at most Limit
// (1 to 100, default 100) after ExclusiveStartTableName, with
// LastEvaluatedTableName when it stopped at Limit (API Reference,
// ListTables). minidyn refuses the operation with an HTTP 400 whose body is
// not a DynamoDB error, so that an SDK reports a deserialization failure.
// The proxy answers it from the tables it saw created and not deleted (its
// emulator starts empty; a table made behind its back is not listed).

// noteTable remembers that op (CreateTable or DeleteTable), answered by
// resp, created or deleted the table it names.
func (p *Proxy) noteTable(op string, in map[string][]byte, resp response) {
	if resp.status != http.StatusOK {
		return
	}
	name := text(in["TableName"])
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fid.tables == nil {
		p.fid.tables = map[string]bool{}
	}
	if op == "CreateTable" {
		p.fid.tables[name] = true
	} else {
		delete(p.fid.tables, name)
	}
}

// listTables answers ListTables.
func (p *Proxy) listTables(body []byte) response {
	var in struct {
		ExclusiveStartTableName string
		Limit                   *int
	}
	if len(body) > 0 {
		if err := json.Unmarshal(body, &in); err != nil {
			return errorResponse(http.StatusBadRequest, "SerializationException", err.Error())
		}
	}
	limit := 100
	if in.Limit != nil {
		if *in.Limit < 1 || *in.Limit > 100 {
			return errorResponse(http.StatusBadRequest, "ValidationException", "1 validation error detected: Value at 'limit' failed to satisfy constraint: Member must have value between 1 and 100")
		}
		limit = *in.Limit
	}
	p.mu.Lock()
	names := make([]string, 0, len(p.fid.tables))
	for name := range p.fid.tables {
		if name > in.ExclusiveStartTableName {
			names = append(names, name)
		}
	}
	p.mu.Unlock()
	sort.Strings(names)
	out := map[string]any{}
	if len(names) > limit {
		names = names[:limit]
		out["LastEvaluatedTableName"] = names[limit-1]
	}
	out["TableNames"] = names
	return response{status: http.StatusOK, header: jsonHeader(), body: marshal(out)}
}

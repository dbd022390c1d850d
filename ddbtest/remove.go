package ddbtest

import (
	"net/http"
	"regexp"
	"strings"
)

// minidyn evaluates the REMOVE clause of an UpdateItem's UpdateExpression
// but never deletes the attributes from the stored item (its environment
// forgets them, and applying it writes back only what is left). DynamoDB
// removes them ("REMOVE — Removes one or more attributes from an item",
// Amazon DynamoDB Developer Guide, "Update expressions"). The proxy
// corrects it: after an UpdateItem that succeeded, in the serialization,
// it reads the item, deletes the top-level attributes the REMOVE clause
// names, writes the item back, and deletes them from the Attributes the
// answer returns.

// removeClause matches the REMOVE clause of an update expression, up to the
// next clause or the end.
var removeClause = regexp.MustCompile(`(?i)\bREMOVE\b(.*?)(\bSET\b|\bADD\b|\bDELETE\b|$)`)

// removedAttributes lists the top-level attributes the REMOVE clause of the
// UpdateItem in names, its placeholders resolved; paths into a map or list
// are left out (the correction does not reach them).
func removedAttributes(in map[string][]byte) []string {
	m := removeClause.FindStringSubmatch(text(in["UpdateExpression"]))
	if m == nil {
		return nil
	}
	names := map[string]string{}
	if raw, err := object(in["ExpressionAttributeNames"]); err == nil {
		for k, v := range raw {
			names[k] = text(v)
		}
	}
	var out []string
	for _, p := range strings.Split(m[1], ",") {
		p = strings.TrimSpace(p)
		if p == "" || strings.ContainsAny(p, ".[") {
			continue
		}
		if n, ok := names[p]; ok {
			p = n
		}
		out = append(out, p)
	}
	return out
}

// applyRemove makes the item an UpdateItem in (answered by resp) updated
// lack the attributes its REMOVE clause names.
func (p *Proxy) applyRemove(in map[string][]byte, resp response) response {
	attrs := removedAttributes(in)
	if len(attrs) == 0 {
		return resp
	}
	if old := p.oldItem("UpdateItem", in); old != nil {
		item := edit(old, func(m map[string][]byte) {
			for _, a := range attrs {
				delete(m, a)
			}
		})
		put := p.call("PutItem", nil, marshal(map[string]any{"TableName": rawJSON(in["TableName"]), "Item": rawJSON(item)}))
		if put.status != http.StatusOK {
			return put
		}
	}
	resp.body = edit(resp.body, func(m map[string][]byte) {
		if a, ok := m["Attributes"]; ok {
			m["Attributes"] = edit(a, func(item map[string][]byte) {
				for _, name := range attrs {
					delete(item, name)
				}
			})
		}
	})
	return resp
}

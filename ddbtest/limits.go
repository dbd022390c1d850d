package ddbtest

import (
	"encoding/json"
	"net/http"
	"strings"
)

// DynamoDB's size and count limits on writes ("Constraints in Amazon
// DynamoDB", Items and DynamoDB transactions; API Reference,
// TransactWriteItems):
//
//   - an item is at most 400 KB (409,600 bytes), its size being the sum of
//     the lengths of its attribute names and values as itemsize.go counts
//     them: a PutItem, BatchWriteItem or transaction Put of a larger item is
//     refused (ValidationException "Item size has exceeded the maximum
//     allowed size"), an UpdateItem whose result would be larger too ("Item
//     size to update has exceeded the maximum allowed size"), and a
//     transaction whose Update would make one is cancelled with reason
//     ValidationError for that action;
//   - a TransactWriteItems groups 1 to 100 actions, "the aggregate size of
//     the items in the transaction cannot exceed 4 MB", and "no two actions
//     can target the same item": each refused with a ValidationException.
//
// minidyn enforces none of them. The proxy refuses what the request shows
// before the emulator sees it, and undoes an update whose result is too
// large (in the serialization, so that no other request sees it).

// The limits, in bytes and actions.
const (
	maxItemSize           = 400 * 1024
	maxTransactionActions = 100
	maxTransactionSize    = 4 * 1024 * 1024
)

// The refusals, worded as DynamoDB words them.
const (
	msgItemTooLarge   = "Item size has exceeded the maximum allowed size"
	msgUpdateTooLarge = "Item size to update has exceeded the maximum allowed size"
)

// checkLimits refuses a write whose request is over a limit dep does not
// let through.
func (p *Proxy) checkLimits(dep Departures, op string, in map[string][]byte) *response {
	refuse := func(msg string) *response {
		r := errorResponse(http.StatusBadRequest, "ValidationException", msg)
		return &r
	}
	switch op {
	case "PutItem":
		if n, _ := itemSize(in["Item"]); !dep.NoItemSizeLimit && n > maxItemSize {
			return refuse(msgItemTooLarge)
		}
	case "BatchWriteItem":
		var req map[string][]struct {
			PutRequest *struct{ Item json.RawMessage }
		}
		_ = json.Unmarshal(in["RequestItems"], &req)
		for _, writes := range req {
			for _, w := range writes {
				if w.PutRequest == nil {
					continue
				}
				if n, _ := itemSize(w.PutRequest.Item); !dep.NoItemSizeLimit && n > maxItemSize {
					return refuse(msgItemTooLarge)
				}
			}
		}
	case "TransactWriteItems":
		return p.checkTransaction(dep, in, refuse)
	}
	return nil
}

// checkTransaction refuses a TransactWriteItems over a limit.
func (p *Proxy) checkTransaction(dep Departures, in map[string][]byte, refuse func(string) *response) *response {
	items := list(in["TransactItems"])
	if !dep.NoTransactionLimits {
		switch {
		case len(items) < 1:
			return refuse("1 validation error detected: Value '[]' at 'transactItems' failed to satisfy constraint: Member must have length greater than or equal to 1")
		case len(items) > maxTransactionActions:
			return refuse("1 validation error detected: Value at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to 100")
		}
	}
	total := 0
	seen := map[string]bool{}
	for _, raw := range items {
		op, action := transactAction(raw)
		table := text(action["TableName"])
		key := action["Key"]
		if op == "Put" {
			n, _ := itemSize(action["Item"])
			if !dep.NoItemSizeLimit && n > maxItemSize {
				return refuse(msgItemTooLarge)
			}
			total += n
			key = p.keyOf(table, action["Item"])
		} else {
			n, _ := itemSize(key)
			v, _ := itemSize(action["ExpressionAttributeValues"])
			total += n + v
		}
		if key != nil && !dep.NoTransactionLimits {
			id := itemID(table, key)
			if seen[id] {
				return refuse("Transaction request cannot include multiple operations on one item")
			}
			seen[id] = true
		}
	}
	if !dep.NoTransactionLimits && total > maxTransactionSize {
		return refuse("Transaction request cannot be larger than 4 MB")
	}
	return nil
}

// itemAt reads, from the emulator, the item of table at key (nil if none).
func (p *Proxy) itemAt(table string, key []byte) []byte {
	if key == nil {
		return nil
	}
	return p.oldItem("GetItem", map[string][]byte{"TableName": marshal(table), "Key": key})
}

// restore puts back item (nil: none) at key of table.
func (p *Proxy) restore(table string, key, item []byte) {
	if item == nil {
		p.call("DeleteItem", nil, marshal(map[string]any{"TableName": table, "Key": rawJSON(key)}))
		return
	}
	p.call("PutItem", nil, marshal(map[string]any{"TableName": table, "Item": rawJSON(item)}))
}

// tooLarge reports whether the item at key of table is over 400 KB.
func (p *Proxy) tooLarge(table string, key []byte) bool {
	n, _ := itemSize(p.itemAt(table, key))
	return n > maxItemSize
}

// sizeCheckedUpdate serves an UpdateItem (in) through do, and undoes it
// when the item it leaves is over 400 KB.
func (p *Proxy) sizeCheckedUpdate(dep Departures, in map[string][]byte, do func() response) response {
	if dep.NoItemSizeLimit {
		return do()
	}
	table, key := text(in["TableName"]), in["Key"]
	before := p.itemAt(table, key)
	resp := do()
	if resp.status != http.StatusOK || !p.tooLarge(table, key) {
		return resp
	}
	p.restore(table, key, before)
	return errorResponse(http.StatusBadRequest, "ValidationException", msgUpdateTooLarge)
}

// txItem is the item one action of a transaction addresses, and what it
// was before the transaction.
type txItem struct {
	op, table string
	key       []byte
	before    []byte
}

// transactionItems reads the items the actions address, when one of them
// is an Update whose result the proxy must size.
func (p *Proxy) transactionItems(dep Departures, items [][]byte) []txItem {
	if dep.NoItemSizeLimit {
		return nil
	}
	update := false
	for _, raw := range items {
		if op, _ := transactAction(raw); op == "Update" {
			update = true
		}
	}
	if !update {
		return nil
	}
	out := make([]txItem, len(items))
	for i, raw := range items {
		op, action := transactAction(raw)
		t := txItem{op: op, table: text(action["TableName"]), key: action["Key"]}
		if op == "Put" {
			t.key = p.keyOf(t.table, action["Item"])
		}
		t.before = p.itemAt(t.table, t.key)
		out[i] = t
	}
	return out
}

// undoOversized undoes a transaction that succeeded on the emulator when
// one of its Updates left an item over 400 KB, and returns the
// cancellation DynamoDB answers; ok is false when none did.
func (p *Proxy) undoOversized(tx []txItem) (response, bool) {
	var codes []string
	over := false
	for _, t := range tx {
		code := "None"
		if t.op == "Update" && p.tooLarge(t.table, t.key) {
			code, over = "ValidationError", true
		}
		codes = append(codes, code)
	}
	if !over {
		return response{}, false
	}
	for _, t := range tx {
		if t.key != nil && t.op != "ConditionCheck" {
			p.restore(t.table, t.key, t.before)
		}
	}
	reasons := make([]map[string]string, len(codes))
	for i, c := range codes {
		reasons[i] = map[string]string{"Code": c}
		if c == "ValidationError" {
			reasons[i]["Message"] = msgUpdateTooLarge
		}
	}
	return response{status: http.StatusBadRequest, header: jsonHeader(), body: marshal(map[string]any{
		"__type":              "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
		"message":             "Transaction cancelled, please refer cancellation reasons for specific reasons [" + strings.Join(codes, ", ") + "]",
		"CancellationReasons": reasons,
	})}, true
}

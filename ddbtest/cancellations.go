package ddbtest

import (
	"net/http"
	"strings"
)

// A cancelled TransactWriteItems carries one cancellation reason per
// action, in order: "If no error then code None", and each action whose
// condition failed gets ConditionalCheckFailed, with the item when it
// asked for ALL_OLD (API Reference, TransactWriteItems and
// CancellationReason). minidyn stops at the first failed condition and
// answers None for every other action. The proxy asks the emulator, in the
// serialization, about the condition of each action answered None (the
// transaction wrote nothing): a one-action TransactWriteItems holding a
// ConditionCheck of that condition, which writes nothing either.

// completeReasons returns the cancellation reasons of the transaction
// whose actions are items, with every failed condition named.
func (p *Proxy) completeReasons(items, reasons [][]byte) [][]byte {
	out := make([][]byte, len(items))
	for i := range items {
		if i < len(reasons) {
			out[i] = reasons[i]
		} else {
			out[i] = marshal(map[string]string{"Code": "None"})
		}
		r, err := object(out[i])
		if err != nil || (text(r["Code"]) != "None" && text(r["Code"]) != "") {
			continue
		}
		if p.conditionFails(items[i]) {
			out[i] = marshal(map[string]string{"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"})
		}
	}
	return out
}

// conditionFails reports whether the condition of one transaction action
// (raw) fails on the items as they are.
func (p *Proxy) conditionFails(raw []byte) bool {
	op, action := transactAction(raw)
	cond := text(action["ConditionExpression"])
	if cond == "" {
		return false
	}
	table := text(action["TableName"])
	key := action["Key"]
	if op == "Put" {
		key = p.keyOf(table, action["Item"])
	}
	if key == nil {
		return false
	}
	check := map[string]rawJSON{"TableName": action["TableName"], "Key": key, "ConditionExpression": action["ConditionExpression"]}
	used := map[string]bool{}
	for _, tok := range placeholderToken.FindAllString(cond, -1) {
		used[tok] = true
	}
	for _, member := range []string{"ExpressionAttributeNames", "ExpressionAttributeValues"} {
		if _, ok := action[member]; !ok {
			continue
		}
		if kept := edit(action[member], func(ph map[string][]byte) {
			for k := range ph {
				if !used[k] {
					delete(ph, k)
				}
			}
		}); string(kept) != "{}" {
			check[member] = kept
		}
	}
	resp := p.call("TransactWriteItems", nil, marshal(map[string]any{"TransactItems": []any{map[string]any{"ConditionCheck": check}}}))
	if resp.status != http.StatusBadRequest || errorType(resp.body) != "TransactionCanceledException" {
		return false
	}
	m, err := object(resp.body)
	if err != nil {
		return false
	}
	reasons := list(m["CancellationReasons"])
	if len(reasons) != 1 {
		return false
	}
	r, _ := object(reasons[0])
	return text(r["Code"]) == "ConditionalCheckFailed"
}

// cancellationMessage is DynamoDB's message of a cancelled transaction with
// these reasons.
func cancellationMessage(reasons [][]byte) []byte {
	codes := make([]string, len(reasons))
	for i, raw := range reasons {
		r, _ := object(raw)
		codes[i] = text(r["Code"])
	}
	return marshal("Transaction cancelled, please refer cancellation reasons for specific reasons [" + strings.Join(codes, ", ") + "]")
}

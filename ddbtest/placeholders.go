package ddbtest

import (
	"encoding/json"
	"net/http"
	"regexp"
	"sort"
	"strings"
)

// DynamoDB refuses a request whose expressions use a placeholder it does
// not define, or that defines one its expressions do not use (Amazon
// DynamoDB Developer Guide, "Using expression attribute values in
// DynamoDB" and "Expression attribute names (aliases) in DynamoDB"; API
// Reference, ExpressionAttributeValues: "Value provided in
// ExpressionAttributeValues unused in expressions"). minidyn reads an
// undefined :value as NULL, so that SET a = :v writes NULL and a condition
// a <> :v passes, and it finds a placeholder "used" when its text occurs
// anywhere in the expressions (:v is used when :v1 is). The proxy checks
// each request, and each action of a transaction, by the placeholder
// tokens of its expressions.

// placeholderToken matches a placeholder in an expression: DynamoDB
// expressions have no string literals, so every match is one.
var placeholderToken = regexp.MustCompile(`[:#][A-Za-z0-9_]+`)

// expressionMembers are the members of a request (or of a transaction
// action) that hold an expression.
var expressionMembers = []string{"UpdateExpression", "ConditionExpression", "KeyConditionExpression", "FilterExpression", "ProjectionExpression"}

// placeholderError is what DynamoDB answers for the placeholders of one
// request or action: "" when they are right.
func placeholderError(in map[string][]byte) string {
	used := map[string]bool{}
	var exprs []string
	for _, member := range expressionMembers {
		if e := text(in[member]); e != "" {
			exprs = append(exprs, e)
			for _, tok := range placeholderToken.FindAllString(e, -1) {
				used[tok] = true
			}
		}
	}
	defined := map[string]bool{}
	var names, values map[string]json.RawMessage
	_ = json.Unmarshal(in["ExpressionAttributeNames"], &names)
	_ = json.Unmarshal(in["ExpressionAttributeValues"], &values)
	for k := range names {
		defined[k] = true
	}
	for k := range values {
		defined[k] = true
	}
	var undefinedNames, undefinedValues, unusedNames, unusedValues []string
	for tok := range used {
		if !defined[tok] {
			if tok[0] == '#' {
				undefinedNames = append(undefinedNames, tok)
			} else {
				undefinedValues = append(undefinedValues, tok)
			}
		}
	}
	for k := range names {
		if !used[k] {
			unusedNames = append(unusedNames, k)
		}
	}
	for k := range values {
		if !used[k] {
			unusedValues = append(unusedValues, k)
		}
	}
	switch {
	case len(exprs) == 0 && len(values) > 0:
		return "ExpressionAttributeValues can only be specified when using expressions"
	case len(exprs) == 0 && len(names) > 0:
		return "ExpressionAttributeNames can only be specified when using expressions"
	case len(undefinedNames) > 0:
		return "An expression attribute name used in the document path is not defined; attribute name: " + first(undefinedNames)
	case len(undefinedValues) > 0:
		return "An expression attribute value used in expression is not defined; attribute value: " + first(undefinedValues)
	case len(unusedNames) > 0:
		return "Value provided in ExpressionAttributeNames unused in expressions: keys: {" + joinSorted(unusedNames) + "}"
	case len(unusedValues) > 0:
		return "Value provided in ExpressionAttributeValues unused in expressions: keys: {" + joinSorted(unusedValues) + "}"
	}
	return ""
}

func first(l []string) string {
	sort.Strings(l)
	return l[0]
}

func joinSorted(l []string) string {
	sort.Strings(l)
	return strings.Join(l, ", ")
}

// checkPlaceholders refuses a request (op, decoded as in) whose
// placeholders, or those of one of its transaction actions, DynamoDB
// refuses.
func checkPlaceholders(op string, in map[string][]byte) *response {
	var msg string
	switch op {
	case "GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan":
		msg = placeholderError(in)
	case "TransactGetItems":
		for _, raw := range list(in["TransactItems"]) {
			_, action := transactAction(raw)
			if action == nil {
				if m, err := object(raw); err == nil {
					action, _ = object(m["Get"])
				}
			}
			if msg = placeholderError(action); msg != "" {
				break
			}
		}
	}
	if msg == "" {
		return nil
	}
	r := errorResponse(http.StatusBadRequest, "ValidationException", msg)
	return &r
}

// keyConditionOnly is a Query or Scan body without what the 1 MB page does
// not depend on (its filter, projection and Select), and with the
// placeholders its remaining expressions use.
func keyConditionOnly(body []byte) []byte {
	return edit(body, func(m map[string][]byte) {
		for _, k := range []string{"FilterExpression", "ProjectionExpression", "Select", "AttributesToGet", "Segment", "TotalSegments"} {
			delete(m, k)
		}
		used := map[string]bool{}
		for _, tok := range placeholderToken.FindAllString(text(m["KeyConditionExpression"]), -1) {
			used[tok] = true
		}
		for _, member := range []string{"ExpressionAttributeNames", "ExpressionAttributeValues"} {
			if _, ok := m[member]; !ok {
				continue
			}
			m[member] = edit(m[member], func(ph map[string][]byte) {
				for k := range ph {
					if !used[k] {
						delete(ph, k)
					}
				}
			})
			if string(m[member]) == "{}" {
				delete(m, member)
			}
		}
	})
}

// actionRefusals cancels a TransactWriteItems (its actions are items) one
// of whose actions has placeholders DynamoDB refuses, or an empty set or a
// set with duplicate members: DynamoDB answers TransactionCanceledException
// with reason ValidationError for each such action and None for the others
// (as Dynoxide answers, by the conformance suite recorded on DynamoDB; the
// API Reference lists ValidationError among the reasons without saying
// which refusals take that form).
func actionRefusals(dep Departures, items [][]byte) *response {
	reasons := make([][]byte, len(items))
	refused := false
	for i, raw := range items {
		_, action := transactAction(raw)
		msg := ""
		if !dep.LaxPlaceholders {
			msg = placeholderError(action)
		}
		if msg == "" && !dep.InvalidValuesAccepted {
			msg = setError(action)
		}
		if msg == "" {
			reasons[i] = marshal(map[string]string{"Code": "None"})
			continue
		}
		refused = true
		reasons[i] = marshal(map[string]string{"Code": "ValidationError", "Message": msg})
	}
	if !refused {
		return nil
	}
	return &response{status: http.StatusBadRequest, header: jsonHeader(), body: marshal(map[string]any{
		"__type":              "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
		"message":             rawJSON(cancellationMessage(reasons)),
		"CancellationReasons": rawJSON(marshal(reasons)),
	})}
}

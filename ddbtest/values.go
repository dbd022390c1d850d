package ddbtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
)

// DynamoDB refuses, with a ValidationException, attribute values it cannot
// store ("Supported data types and naming rules in Amazon DynamoDB"): an
// empty set ("an empty set is not allowed"), a set with duplicate members
// ("all of the elements within a set must be unique"), a key attribute that
// is an empty String or Binary ("String and Binary type attributes of a
// primary key ... cannot be empty"), a NULL that is not true, and a number
// it cannot store (numbers.go). It stores numbers normalized. minidyn
// accepts all of them and stores numbers as sent; the proxy validates and
// normalizes every attribute value of a request before the emulator sees
// it, and normalizes the numbers of every answer.

// avPlace says where an attribute map sits in a request.
type avPlace int

const (
	placeItem   avPlace = iota // an item (Put): its key attributes must not be empty
	placeKey                   // a key (Key, Keys, ExclusiveStartKey)
	placeValues                // ExpressionAttributeValues
	placeOther                 // an answer's item, or anything else
)

// avVisitor sees, and may replace, each attribute map of a request or
// answer: its place and the table it belongs to ("" if unknown).
type avVisitor func(place avPlace, table string, attrs map[string]json.RawMessage) error

// attrMapMembers are the members whose value is one attribute map, and
// where it sits.
var attrMapMembers = map[string]avPlace{
	"Item": placeItem, "Key": placeKey, "ExclusiveStartKey": placeKey,
	"ExpressionAttributeValues": placeValues,
	"Attributes":                placeOther, "LastEvaluatedKey": placeOther,
}

// containerMembers are the members the walk descends into.
var containerMembers = map[string]bool{
	"TransactItems": true, "Put": true, "Update": true, "Delete": true, "ConditionCheck": true, "Get": true,
	"RequestItems": true, "PutRequest": true, "DeleteRequest": true, "UnprocessedItems": true,
	"UnprocessedKeys": true, "CancellationReasons": true, "Responses": true,
}

// walkAttrMaps calls visit on every attribute map of the DynamoDB JSON
// request or answer body, and returns the body with the maps as visit left
// them. The first error stops the walk.
func walkAttrMaps(body []byte, visit avVisitor) ([]byte, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return body, nil // not JSON: the emulator answers it
	}
	top, ok := v.(map[string]any)
	if !ok {
		return body, nil
	}
	if err := walkObject(top, "", visit); err != nil {
		return nil, err
	}
	return marshal(top), nil
}

// walkObject walks one JSON object, whose attribute maps belong to table
// unless it names its own.
func walkObject(m map[string]any, table string, visit avVisitor) error {
	if t, ok := m["TableName"].(string); ok {
		table = t
	}
	for name, val := range m {
		if place, ok := attrMapMembers[name]; ok {
			if err := visitMap(m, name, place, table, visit); err != nil {
				return err
			}
			continue
		}
		switch {
		case name == "Items" || name == "Keys":
			if err := visitList(val, placeFor(name), table, visit); err != nil {
				return err
			}
		case name == "RequestItems" || name == "UnprocessedItems" || name == "UnprocessedKeys" || (name == "Responses" && isObject(val)):
			byTable, _ := val.(map[string]any)
			for t, sub := range byTable {
				var err error
				switch sub := sub.(type) {
				case map[string]any:
					err = walkObject(sub, t, visit)
				case []any:
					if name == "Responses" {
						err = visitList(sub, placeOther, t, visit)
					} else {
						err = walkList(sub, t, visit)
					}
				}
				if err != nil {
					return err
				}
			}
		case containerMembers[name]:
			var err error
			switch sub := val.(type) {
			case map[string]any:
				err = walkObject(sub, table, visit)
			case []any:
				err = walkList(sub, table, visit)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func walkList(l []any, table string, visit avVisitor) error {
	for _, e := range l {
		if o, ok := e.(map[string]any); ok {
			if err := walkObject(o, table, visit); err != nil {
				return err
			}
		}
	}
	return nil
}

func placeFor(member string) avPlace {
	if member == "Keys" {
		return placeKey
	}
	return placeOther
}

func isObject(v any) bool { _, ok := v.(map[string]any); return ok }

// visitMap hands the attribute map m[name] to visit and stores it back.
func visitMap(m map[string]any, name string, place avPlace, table string, visit avVisitor) error {
	raw, err := json.Marshal(m[name])
	if err != nil {
		return nil
	}
	var attrs map[string]json.RawMessage
	if json.Unmarshal(raw, &attrs) != nil || attrs == nil {
		return nil
	}
	if err := visit(place, table, attrs); err != nil {
		return err
	}
	m[name] = attrs
	return nil
}

// visitList hands each attribute map of the list val to visit.
func visitList(val any, place avPlace, table string, visit avVisitor) error {
	l, ok := val.([]any)
	if !ok {
		return nil
	}
	for i := range l {
		holder := map[string]any{"m": l[i]}
		if err := visitMap(holder, "m", place, table, visit); err != nil {
			return err
		}
		l[i] = holder["m"]
	}
	return nil
}

// mapValues applies fn to every scalar attribute value (S, N, B, BOOL,
// NULL, SS, NS, BS) in v, recursively through L and M, and returns v with
// the values fn returned.
func mapValues(v json.RawMessage, fn func(typ string, val json.RawMessage) (json.RawMessage, error)) (json.RawMessage, error) {
	var av map[string]json.RawMessage
	if err := json.Unmarshal(v, &av); err != nil || len(av) != 1 {
		return v, nil // not an attribute value: the emulator answers it
	}
	for typ, val := range av {
		switch typ {
		case "L":
			var l []json.RawMessage
			if json.Unmarshal(val, &l) != nil {
				return v, nil
			}
			for i := range l {
				e, err := mapValues(l[i], fn)
				if err != nil {
					return nil, err
				}
				l[i] = e
			}
			av[typ] = marshal(l)
		case "M":
			var m map[string]json.RawMessage
			if json.Unmarshal(val, &m) != nil {
				return v, nil
			}
			for k := range m {
				e, err := mapValues(m[k], fn)
				if err != nil {
					return nil, err
				}
				m[k] = e
			}
			av[typ] = marshal(m)
		default:
			out, err := fn(typ, val)
			if err != nil {
				return nil, err
			}
			av[typ] = out
		}
	}
	return marshal(av), nil
}

// checkValue refuses a scalar value DynamoDB cannot store and returns it
// with its numbers normalized, as dep says; sets says whether to refuse
// empty sets and duplicate members too (a transaction cancels the action
// instead: see setError).
func checkValue(dep Departures, typ string, val json.RawMessage, sets bool) (json.RawMessage, error) {
	switch typ {
	case "N":
		if dep.NumbersAsSent {
			return val, nil
		}
		n, err := normalNumber(text(val))
		if err != nil {
			return nil, err
		}
		return marshal(n), nil
	case "NULL":
		if !dep.InvalidValuesAccepted && string(val) != "true" {
			return nil, errNullNotTrue
		}
	case "SS", "NS", "BS":
		var members []string
		if json.Unmarshal(val, &members) != nil {
			return val, nil
		}
		if sets && !dep.InvalidValuesAccepted && len(members) == 0 {
			return nil, refusal(fmt.Sprintf("One or more parameter values were invalid: An %s set  may not be empty", setKind[typ]))
		}
		if typ == "NS" && !dep.NumbersAsSent {
			for i, s := range members {
				n, err := normalNumber(s)
				if err != nil {
					return nil, err
				}
				members[i] = n
			}
		}
		if sets && !dep.InvalidValuesAccepted {
			sorted := append([]string(nil), members...)
			sort.Strings(sorted)
			for i := 1; i < len(sorted); i++ {
				if sorted[i] == sorted[i-1] {
					return nil, refusal("One or more parameter values were invalid: Input collection contains duplicates")
				}
			}
		}
		return marshal(members), nil
	}
	return val, nil
}

var setKind = map[string]string{"SS": "string", "NS": "number", "BS": "binary"}

const errNullNotTrue refusal = "One or more parameter values were invalid: Null attribute value types must have the value of true"

// checkValues validates every attribute value of a request body and
// normalizes its numbers, as dep says; sets as for checkValue. It returns
// the body to forward, or the ValidationException DynamoDB answers.
func (p *Proxy) checkValues(dep Departures, body []byte, sets bool) ([]byte, *response) {
	if dep.NumbersAsSent && dep.InvalidValuesAccepted {
		return body, nil
	}
	out, err := walkAttrMaps(body, func(place avPlace, table string, attrs map[string]json.RawMessage) error {
		var keys []string
		if !dep.InvalidValuesAccepted && (place == placeItem || place == placeKey) && table != "" {
			keys = p.keySchema(table)
		}
		for name, v := range attrs {
			nv, err := mapValues(v, func(typ string, val json.RawMessage) (json.RawMessage, error) {
				return checkValue(dep, typ, val, sets)
			})
			if err != nil {
				if place == placeValues {
					return refusal(fmt.Sprintf("ExpressionAttributeValues contains invalid value: %v for key %s", err, name))
				}
				return err
			}
			attrs[name] = nv
		}
		for _, k := range keys {
			if emptyScalar(attrs[k]) {
				return refusal("One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: " + k)
			}
		}
		return nil
	})
	if err != nil {
		r := errorResponse(http.StatusBadRequest, "ValidationException", err.Error())
		return nil, &r
	}
	return out, nil
}

// emptyScalar reports whether v is an empty String or Binary.
func emptyScalar(v json.RawMessage) bool {
	if v == nil {
		return false
	}
	var av map[string]json.RawMessage
	if json.Unmarshal(v, &av) != nil {
		return false
	}
	for _, typ := range []string{"S", "B"} {
		if raw, ok := av[typ]; ok && text(raw) == "" {
			return true
		}
	}
	return false
}

// normalizeAnswer rewrites the numbers of an answer as DynamoDB returns
// them (the emulator computes some, as ADD and SET a = a + :n do, and
// keeps them as it computed them).
func normalizeAnswer(dep Departures, resp response) response {
	if dep.NumbersAsSent || resp.status != http.StatusOK {
		if dep.NumbersAsSent || errorType(resp.body) != "TransactionCanceledException" {
			return resp
		}
	}
	out, err := walkAttrMaps(resp.body, func(_ avPlace, _ string, attrs map[string]json.RawMessage) error {
		for name, v := range attrs {
			nv, err := mapValues(v, func(typ string, val json.RawMessage) (json.RawMessage, error) {
				if typ != "N" && typ != "NS" {
					return val, nil
				}
				nv, err := checkValue(Departures{}, typ, val, false)
				if err != nil {
					return val, nil // an answer is passed on as it is
				}
				return nv, nil
			})
			if err == nil {
				attrs[name] = nv
			}
		}
		return nil
	})
	if err == nil {
		resp.body = out
	}
	return resp
}

// setError is DynamoDB's message for the first empty set or set with
// duplicate members in the Item or ExpressionAttributeValues of one
// transaction action (in), or "".
func setError(in map[string][]byte) string {
	for _, member := range []string{"Item", "ExpressionAttributeValues"} {
		var attrs map[string]json.RawMessage
		if json.Unmarshal(in[member], &attrs) != nil {
			continue
		}
		for _, v := range attrs {
			_, err := mapValues(v, func(typ string, val json.RawMessage) (json.RawMessage, error) {
				if typ != "SS" && typ != "NS" && typ != "BS" {
					return val, nil
				}
				return checkValue(Departures{NumbersAsSent: true}, typ, val, true)
			})
			if err != nil {
				return err.Error()
			}
		}
	}
	return ""
}

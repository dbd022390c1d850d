package powertools

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

// The `data` attribute is handled in DynamoDB's JSON form of an attribute
// value ({"S": "..."}, {"M": {...}}, ...), so that this package needs no
// SDK; dynamostore converts.

// maxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER: marshall refuses
// a number beyond it.
const maxSafeInteger = 1<<53 - 1

// DecodeData returns, as JSON, the response a Powertools record of this
// language holds in its `data` attribute (given in DynamoDB's JSON form):
// what the old function returned, which a replay answers (Python replays
// a falsy response as null, as Powertools Python does). Python, Java and
// .NET store a string of JSON (Java stores a string result as it is, which
// comes back as a JSON string); TypeScript a native DynamoDB value.
func (c Config) DecodeData(attr json.RawMessage) (json.RawMessage, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if c.Language == TypeScript {
		av, err := parse(attr)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrData, err)
		}
		var b strings.Builder
		if err := attrToJSON(&b, av); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrData, err)
		}
		return json.RawMessage(b.String()), nil
	}
	var av struct {
		S *string `json:"S"`
	}
	if err := json.Unmarshal(attr, &av); err != nil || av.S == nil {
		return nil, fmt.Errorf("%w: %s stores a string", ErrData, c.Language)
	}
	v, err := parse([]byte(*av.S))
	if err != nil {
		if c.Language == Java {
			s, _ := json.Marshal(*av.S)
			return s, nil
		}
		return nil, fmt.Errorf("%w: %w", ErrData, err)
	}
	if c.Language == Python && falsy(v) {
		return json.RawMessage("null"), nil
	}
	return json.RawMessage(*av.S), nil
}

// EncodeData returns the `data` attribute (DynamoDB's JSON form) this
// language's Powertools stores for a function that returned outcome (JSON),
// so that an old version still serving replays it. It fails with ErrData
// for an outcome the language could not have stored (TypeScript's marshall
// refuses a number beyond ±(2^53-1) or not finite).
func (c Config) EncodeData(outcome json.RawMessage) (json.RawMessage, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	v, err := parse(outcome)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrData, err)
	}
	if c.Language == Python || c.Language == Java {
		if overflows(v) {
			// json.dumps and Jackson would write Infinity: no JSON, which
			// this package could not read back either.
			return nil, fmt.Errorf("%w: a number beyond the double range", ErrData)
		}
	}
	var s strings.Builder
	switch c.Language {
	case TypeScript:
		var b strings.Builder
		if err := marshall(&b, v); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrData, err)
		}
		return json.RawMessage(b.String()), nil
	case Python:
		if falsy(v) {
			v = value{kind: kindNull}
		}
		pythonJSON(&s, v)
	case Java:
		if v.kind == kindString {
			s.WriteString(v.text)
		} else {
			javaJSON(&s, v)
		}
	case DotNet:
		dotnetJSON(&s, v)
	}
	out, err := json.Marshal(map[string]string{"S": s.String()})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrData, err)
	}
	return out, nil
}

// overflows reports a non-integer number in v that reads as an infinite
// double.
func overflows(v value) bool {
	switch v.kind {
	case kindNumber:
		return !isInteger(v.text) && math.IsInf(parseFloat(v.text), 0)
	case kindArray:
		for _, item := range v.items {
			if overflows(item) {
				return true
			}
		}
	case kindObject:
		for _, m := range v.members {
			if overflows(m.value) {
				return true
			}
		}
	}
	return false
}

// falsy is Python's truth test on what json.loads makes of v: Powertools
// Python stores a falsy response as None ("null") and replays a falsy
// stored one as None.
func falsy(v value) bool {
	switch v.kind {
	case kindNull:
		return true
	case kindBool:
		return !v.boolean
	case kindNumber:
		return parseFloat(v.text) == 0
	case kindString:
		return v.text == ""
	case kindArray:
		return len(v.items) == 0
	}
	return len(v.members) == 0
}

// marshall writes v as @aws-sdk/util-dynamodb's marshall writes the value
// JSON.parse makes of it.
func marshall(b *strings.Builder, v value) error {
	switch v.kind {
	case kindNull:
		b.WriteString(`{"NULL":true}`)
	case kindBool:
		fmt.Fprintf(b, `{"BOOL":%t}`, v.boolean)
	case kindNumber:
		n, ok := jsNumber(v.text)
		if f := parseFloat(v.text); !ok || math.Abs(f) > maxSafeInteger {
			return fmt.Errorf("number %s is not one marshall stores", v.text)
		}
		b.WriteString(`{"N":`)
		jsString(b, n)
		b.WriteByte('}')
	case kindString:
		b.WriteString(`{"S":`)
		jsString(b, v.text)
		b.WriteByte('}')
	case kindArray:
		b.WriteString(`{"L":[`)
		for i, item := range v.items {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := marshall(b, item); err != nil {
				return err
			}
		}
		b.WriteString(`]}`)
	case kindObject:
		b.WriteString(`{"M":{`)
		for i, m := range jsObjectOrder(v.members) {
			if i > 0 {
				b.WriteByte(',')
			}
			jsString(b, m.name)
			b.WriteByte(':')
			if err := marshall(b, m.value); err != nil {
				return err
			}
		}
		b.WriteString(`}}`)
	}
	return nil
}

// jsObjectOrder lists an object JSON.parse built as JavaScript enumerates
// it: array-index keys ascending, then the others in the order written,
// each once with its last value.
func jsObjectOrder(in []member) []member {
	members := lastWins(in)
	var indexKeys, others []member
	for _, m := range members {
		if _, ok := arrayIndex(m.name); ok {
			indexKeys = append(indexKeys, m)
		} else {
			others = append(others, m)
		}
	}
	sort.SliceStable(indexKeys, func(i, j int) bool {
		a, _ := arrayIndex(indexKeys[i].name)
		c, _ := arrayIndex(indexKeys[j].name)
		return a < c
	})
	return append(indexKeys, others...)
}

// attrToJSON writes the JSON of what unmarshall makes of a DynamoDB
// attribute value (in its JSON form, parsed): a map an object, a list an
// array, a number its literal. Sets and binary values are no JSON response
// and are refused.
func attrToJSON(b *strings.Builder, av value) error {
	if av.kind != kindObject || len(av.members) != 1 {
		return fmt.Errorf("an attribute value is an object of one type")
	}
	typ, v := av.members[0].name, av.members[0].value
	switch {
	case typ == "S" && v.kind == kindString:
		jsString(b, v.text)
	case typ == "N" && v.kind == kindString:
		n, err := parse([]byte(v.text))
		if err != nil || n.kind != kindNumber {
			return fmt.Errorf("the number %q is not a JSON number", v.text)
		}
		b.WriteString(n.text)
	case typ == "BOOL" && v.kind == kindBool:
		fmt.Fprintf(b, "%t", v.boolean)
	case typ == "NULL":
		b.WriteString("null")
	case typ == "L" && v.kind == kindArray:
		b.WriteByte('[')
		for i, item := range v.items {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := attrToJSON(b, item); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case typ == "M" && v.kind == kindObject:
		b.WriteByte('{')
		for i, m := range lastWins(v.members) {
			if i > 0 {
				b.WriteByte(',')
			}
			jsString(b, m.name)
			b.WriteByte(':')
			if err := attrToJSON(b, m.value); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		return fmt.Errorf("attribute type %s is not a JSON value", typ)
	}
	return nil
}

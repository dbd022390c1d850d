package ddbtest

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Item sizes as DynamoDB computes them for capacity (DynamoDB developer
// guide, "DynamoDB item sizes and formats", CapacityUnitCalculations):
//
//   - the size of an item is the sum of the sizes of its attributes, and an
//     attribute's size is the UTF-8 length of its name plus the size of its
//     value;
//   - a String is its UTF-8 length;
//   - a Number is "approximately (1 byte per two significant digits) +
//     (1 byte)", leading and trailing zeroes trimmed;
//   - a Binary is its raw length (not the length of its base64 encoding);
//   - a Null or a Boolean is 1 byte;
//   - a List or a Map is 3 bytes of overhead plus, for every element, its
//     size and 1 more byte; a Map's element also counts its name.
//
// The page does not give a rule for sets; a set is taken as the sum of its
// elements, each sized as its scalar type (an inference, said here).

// errAttributeValue reports a value that is not a DynamoDB JSON
// AttributeValue.
var errAttributeValue = errors.New("ddbtest: not a DynamoDB AttributeValue")

// itemSize is the size in bytes of an item in DynamoDB JSON
// ({"name": {"S": "v"}, ...}). A null or empty body is an absent item, of
// size 0.
func itemSize(item []byte) (int, error) {
	if len(item) == 0 || string(item) == "null" {
		return 0, nil
	}
	var attrs map[string]json.RawMessage
	if err := json.Unmarshal(item, &attrs); err != nil {
		return 0, err
	}
	n := 0
	for name, v := range attrs {
		size, err := valueSize(v)
		if err != nil {
			return 0, fmt.Errorf("attribute %q: %w", name, err)
		}
		n += len(name) + size
	}
	return n, nil
}

// valueSize is the size of one AttributeValue, without its name.
func valueSize(raw json.RawMessage) (int, error) {
	var av map[string]json.RawMessage
	if err := json.Unmarshal(raw, &av); err != nil || len(av) != 1 {
		return 0, errAttributeValue
	}
	for typ, v := range av {
		switch typ {
		case "S":
			var s string
			err := json.Unmarshal(v, &s)
			return len(s), err
		case "N":
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return 0, err
			}
			return numberSize(s)
		case "B":
			return binarySize(v)
		case "BOOL", "NULL":
			return 1, nil
		case "L":
			var l []json.RawMessage
			if err := json.Unmarshal(v, &l); err != nil {
				return 0, err
			}
			n := 3
			for _, e := range l {
				size, err := valueSize(e)
				if err != nil {
					return 0, err
				}
				n += size + 1
			}
			return n, nil
		case "M":
			var m map[string]json.RawMessage
			if err := json.Unmarshal(v, &m); err != nil {
				return 0, err
			}
			n := 3
			for name, e := range m {
				size, err := valueSize(e)
				if err != nil {
					return 0, err
				}
				n += len(name) + size + 1
			}
			return n, nil
		case "SS", "NS", "BS":
			var l []json.RawMessage
			if err := json.Unmarshal(v, &l); err != nil {
				return 0, err
			}
			n := 0
			for _, e := range l {
				size, err := valueSize(json.RawMessage(`{"` + typ[:1] + `":` + string(e) + `}`))
				if err != nil {
					return 0, err
				}
				n += size
			}
			return n, nil
		}
	}
	return 0, errAttributeValue
}

// binarySize is the raw length of a base64-encoded Binary.
func binarySize(v json.RawMessage) (int, error) {
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return 0, err
	}
	b, err := base64.StdEncoding.DecodeString(s)
	return len(b), err
}

// numberSize is the size of a Number: 1 byte per two significant digits
// (leading and trailing zeroes trimmed), plus 1.
func numberSize(s string) (int, error) {
	mantissa, _, _ := strings.Cut(strings.ToLower(strings.TrimLeft(s, "+-")), "e")
	digits := strings.Replace(mantissa, ".", "", 1)
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0, fmt.Errorf("ddbtest: %q is not a DynamoDB Number", s)
	}
	significant := len(strings.Trim(digits, "0"))
	return (significant+1)/2 + 1, nil
}

// ItemSize returns the size in bytes of item as DynamoDB computes it for
// capacity ("DynamoDB item sizes and formats"; the rules above): what a
// write of it costs is one write unit per started 1,024 bytes. A Number
// that is not one counts as its text.
func ItemSize(item map[string]types.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name) + attributeSize(v)
	}
	return n
}

func attributeSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return sdkNumberSize(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += attributeSize(e) + 1
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for name, e := range v.Value {
			n += len(name) + attributeSize(e) + 1
		}
		return n
	case *types.AttributeValueMemberSS:
		n := 0
		for _, e := range v.Value {
			n += len(e)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, e := range v.Value {
			n += sdkNumberSize(e)
		}
		return n
	case *types.AttributeValueMemberBS:
		n := 0
		for _, e := range v.Value {
			n += len(e)
		}
		return n
	}
	return 0
}

func sdkNumberSize(s string) int {
	if n, err := numberSize(s); err == nil {
		return n
	}
	return len(s)
}

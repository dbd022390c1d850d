package dynamostore

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// attrString is an S attribute's value, "" for anything else.
func attrString(av types.AttributeValue) string {
	if s, ok := av.(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// attrInt is an N attribute's integer part, 0 for anything else (a
// Powertools timestamp is an integer; Python writes int(), TypeScript
// Math.round and Date.now()).
func attrInt(av types.AttributeValue) int64 {
	n, ok := av.(*types.AttributeValueMemberN)
	if !ok {
		return 0
	}
	if i, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
		return i
	}
	f, err := strconv.ParseFloat(n.Value, 64)
	if err != nil {
		return 0
	}
	return int64(f)
}

// attributeJSON writes an attribute value in DynamoDB's JSON form ({"S":
// "..."}, {"M": {...}}), which package powertools reads.
func attributeJSON(av types.AttributeValue) (json.RawMessage, error) {
	w, err := wireOf(av, 0)
	if err != nil {
		return nil, err
	}
	return json.Marshal(w)
}

// maxAttributeDepth is DynamoDB's nesting limit for a document attribute.
const maxAttributeDepth = 32

func wireOf(av types.AttributeValue, depth int) (any, error) {
	if depth > maxAttributeDepth {
		return nil, fmt.Errorf("attribute nested deeper than %d levels", maxAttributeDepth)
	}
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return map[string]string{"S": v.Value}, nil
	case *types.AttributeValueMemberN:
		return map[string]string{"N": v.Value}, nil
	case *types.AttributeValueMemberBOOL:
		return map[string]bool{"BOOL": v.Value}, nil
	case *types.AttributeValueMemberNULL:
		return map[string]bool{"NULL": true}, nil
	case *types.AttributeValueMemberB:
		return map[string]string{"B": base64.StdEncoding.EncodeToString(v.Value)}, nil
	case *types.AttributeValueMemberL:
		items := make([]any, len(v.Value))
		for i, item := range v.Value {
			w, err := wireOf(item, depth+1)
			if err != nil {
				return nil, err
			}
			items[i] = w
		}
		return map[string]any{"L": items}, nil
	case *types.AttributeValueMemberM:
		members := make(map[string]any, len(v.Value))
		for name, item := range v.Value {
			w, err := wireOf(item, depth+1)
			if err != nil {
				return nil, err
			}
			members[name] = w
		}
		return map[string]any{"M": members}, nil
	}
	return nil, fmt.Errorf("attribute of type %T is not a JSON value", av)
}

// attributeValue reads an attribute value from DynamoDB's JSON form (what
// package powertools writes: S, N, BOOL, NULL, L, M).
func attributeValue(wire json.RawMessage) (types.AttributeValue, error) {
	return attributeFromWire(wire, 0)
}

func attributeFromWire(wire json.RawMessage, depth int) (types.AttributeValue, error) {
	if depth > maxAttributeDepth {
		return nil, fmt.Errorf("attribute nested deeper than %d levels", maxAttributeDepth)
	}
	var typed map[string]json.RawMessage
	if err := json.Unmarshal(wire, &typed); err != nil {
		return nil, err
	}
	if len(typed) != 1 {
		return nil, fmt.Errorf("an attribute value has one type, not %d", len(typed))
	}
	for typ, raw := range typed {
		switch typ {
		case "S", "N":
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, err
			}
			if typ == "N" {
				return &types.AttributeValueMemberN{Value: s}, nil
			}
			return &types.AttributeValueMemberS{Value: s}, nil
		case "BOOL":
			var b bool
			if err := json.Unmarshal(raw, &b); err != nil {
				return nil, err
			}
			return &types.AttributeValueMemberBOOL{Value: b}, nil
		case "NULL":
			return &types.AttributeValueMemberNULL{Value: true}, nil
		case "L":
			var items []json.RawMessage
			if err := json.Unmarshal(raw, &items); err != nil {
				return nil, err
			}
			l := make([]types.AttributeValue, len(items))
			for i, item := range items {
				av, err := attributeFromWire(item, depth+1)
				if err != nil {
					return nil, err
				}
				l[i] = av
			}
			return &types.AttributeValueMemberL{Value: l}, nil
		case "M":
			var members map[string]json.RawMessage
			if err := json.Unmarshal(raw, &members); err != nil {
				return nil, err
			}
			m := make(map[string]types.AttributeValue, len(members))
			for name, item := range members {
				av, err := attributeFromWire(item, depth+1)
				if err != nil {
					return nil, err
				}
				m[name] = av
			}
			return &types.AttributeValueMemberM{Value: m}, nil
		}
		return nil, fmt.Errorf("attribute type %s not written here", typ)
	}
	return nil, nil
}

package frontdoor

import (
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Image returns an item read with the AWS SDK (GetItem, Scan) as a stream
// record's image, as DynamoDB Streams would carry it.
func Image(item map[string]types.AttributeValue) (map[string]events.DynamoDBAttributeValue, error) {
	if item == nil {
		return nil, nil
	}
	out := make(map[string]events.DynamoDBAttributeValue, len(item))
	for k, v := range item {
		ev, err := value(v)
		if err != nil {
			return nil, fmt.Errorf("frontdoor: attribute %s: %w", k, err)
		}
		out[k] = ev
	}
	return out, nil
}

func value(v types.AttributeValue) (events.DynamoDBAttributeValue, error) {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return events.NewStringAttribute(v.Value), nil
	case *types.AttributeValueMemberN:
		return events.NewNumberAttribute(v.Value), nil
	case *types.AttributeValueMemberB:
		return events.NewBinaryAttribute(v.Value), nil
	case *types.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(v.Value), nil
	case *types.AttributeValueMemberNULL:
		return events.NewNullAttribute(), nil
	case *types.AttributeValueMemberSS:
		return events.NewStringSetAttribute(v.Value), nil
	case *types.AttributeValueMemberNS:
		return events.NewNumberSetAttribute(v.Value), nil
	case *types.AttributeValueMemberBS:
		return events.NewBinarySetAttribute(v.Value), nil
	case *types.AttributeValueMemberL:
		l := make([]events.DynamoDBAttributeValue, len(v.Value))
		for i, e := range v.Value {
			ev, err := value(e)
			if err != nil {
				return events.DynamoDBAttributeValue{}, err
			}
			l[i] = ev
		}
		return events.NewListAttribute(l), nil
	case *types.AttributeValueMemberM:
		m, err := Image(v.Value)
		if err != nil {
			return events.DynamoDBAttributeValue{}, err
		}
		if m == nil {
			m = map[string]events.DynamoDBAttributeValue{}
		}
		return events.NewMapAttribute(m), nil
	}
	return events.DynamoDBAttributeValue{}, fmt.Errorf("unsupported attribute value %T", v)
}

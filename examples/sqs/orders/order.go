package orders

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Order is the body of an order message.
type Order struct {
	ID       string `json:"order_id"`
	Customer string `json:"customer"`
	Items    []Item `json:"items"`
	// Total is in the currency's smallest unit (cents).
	Total int64 `json:"total"`
}

// Item is one line of an order.
type Item struct {
	SKU string `json:"sku"`
	Qty int64  `json:"qty"`
}

// ErrInvalidOrder matches every error of [Parse].
var ErrInvalidOrder = errors.New("orders: invalid order")

// Parse decodes and validates an order message body. Its errors match
// [ErrInvalidOrder] and never quote the body.
func Parse(body string) (Order, error) {
	var o Order
	dec := json.NewDecoder(bytes.NewReader([]byte(body)))
	if err := dec.Decode(&o); err != nil {
		return Order{}, fmt.Errorf("%w: the body is not an order object", ErrInvalidOrder)
	}
	if dec.More() {
		return Order{}, fmt.Errorf("%w: data after the order object", ErrInvalidOrder)
	}
	return o, o.Validate()
}

// Validate reports the first thing wrong with o.
func (o Order) Validate() error {
	switch {
	case o.ID == "":
		return fmt.Errorf("%w: no order_id", ErrInvalidOrder)
	case o.Customer == "":
		return fmt.Errorf("%w: no customer", ErrInvalidOrder)
	case len(o.Items) == 0:
		return fmt.Errorf("%w: no items", ErrInvalidOrder)
	case o.Total < 1:
		return fmt.Errorf("%w: total must be at least 1", ErrInvalidOrder)
	}
	for i, it := range o.Items {
		switch {
		case it.SKU == "":
			return fmt.Errorf("%w: item %d has no sku", ErrInvalidOrder, i)
		case it.Qty < 1:
			return fmt.Errorf("%w: item %d has a qty below 1", ErrInvalidOrder, i)
		}
	}
	return nil
}

// Item renders o as an item of the orders table, whose partition key is
// id (S).
func (o Order) Item() map[string]types.AttributeValue {
	lines := make([]types.AttributeValue, len(o.Items))
	for i, it := range o.Items {
		lines[i] = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"sku": &types.AttributeValueMemberS{Value: it.SKU},
			"qty": &types.AttributeValueMemberN{Value: strconv.FormatInt(it.Qty, 10)},
		}}
	}
	return map[string]types.AttributeValue{
		"id":       &types.AttributeValueMemberS{Value: o.ID},
		"customer": &types.AttributeValueMemberS{Value: o.Customer},
		"items":    &types.AttributeValueMemberL{Value: lines},
		"total":    &types.AttributeValueMemberN{Value: strconv.FormatInt(o.Total, 10)},
	}
}

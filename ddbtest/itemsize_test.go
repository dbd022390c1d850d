package ddbtest

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The rules of "DynamoDB item sizes and formats" (CapacityUnitCalculations),
// one case each: the size of an item is the sum of its attribute names'
// UTF-8 lengths and its values' sizes.
func TestItemSizeFollowsTheDeveloperGuide(t *testing.T) {
	cases := []struct {
		name string
		item string
		want int
	}{
		{"absent item", ``, 0},
		{"string: name + UTF-8 bytes", `{"pk":{"S":"abc"}}`, 2 + 3},
		{"string: multi-byte name and value", `{"é":{"S":"日本"}}`, 2 + 6},
		{"number: 1 byte per two significant digits + 1", `{"n":{"N":"1234"}}`, 1 + 2 + 1},
		{"number: odd digit count rounds up", `{"n":{"N":"12345"}}`, 1 + 3 + 1},
		{"number: leading and trailing zeroes trimmed", `{"n":{"N":"000120.500"}}`, 1 + 2 + 1},
		{"number: sign and exponent are not digits", `{"n":{"N":"-1.5E10"}}`, 1 + 1 + 1},
		{"number: zero", `{"n":{"N":"0"}}`, 1 + 0 + 1},
		{"number: 38 digits", `{"n":{"N":"12345678901234567890123456789012345678"}}`, 1 + 19 + 1},
		{"binary: raw length, not base64", `{"b":{"B":"AAECAwQ="}}`, 1 + 5},
		{"boolean: 1 byte", `{"ok":{"BOOL":true}}`, 2 + 1},
		{"null: 1 byte", `{"z":{"NULL":true}}`, 1 + 1},
		{"empty list: 3 bytes", `{"l":{"L":[]}}`, 1 + 3},
		{"list: 3 + each element + 1", `{"l":{"L":[{"S":"ab"},{"BOOL":false}]}}`, 1 + 3 + (2 + 1) + (1 + 1)},
		{"empty map: 3 bytes", `{"m":{"M":{}}}`, 1 + 3},
		{"map: 3 + each name + element + 1", `{"m":{"M":{"k":{"S":"ab"},"kk":{"N":"7"}}}}`, 1 + 3 + (1 + 2 + 1) + (2 + 2 + 1)},
		{"nested map in list", `{"l":{"L":[{"M":{"a":{"S":"x"}}}]}}`, 1 + 3 + (3 + (1 + 1 + 1)) + 1},
		{"string set: sum of strings", `{"ss":{"SS":["a","bcd"]}}`, 2 + 4},
		{"number set: sum of numbers", `{"ns":{"NS":["1","22"]}}`, 2 + 2 + 2},
		{"binary set: sum of raw lengths", `{"bs":{"BS":["AA==","AAE="]}}`, 2 + 3},
		{"several attributes add up", `{"pk":{"S":"k"},"v":{"S":"` + strings.Repeat("x", 1000) + `"}}`, 3 + 1001},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := itemSize([]byte(c.item))
			if err != nil || got != c.want {
				t.Fatalf("itemSize(%s) = %d, %v; want %d", c.item, got, err, c.want)
			}
		})
	}
}

func TestItemSizeRefusesWhatIsNotDynamoDBJSON(t *testing.T) {
	for _, item := range []string{`{"n":{"N":"1x"}}`, `{"n":{"N":""}}`, `{"a":{"X":"1"}}`, `{"a":{"S":"x","N":"1"}}`, `{"b":{"B":"***"}}`, `[1]`} {
		if n, err := itemSize([]byte(item)); err == nil {
			t.Errorf("itemSize(%s) = %d, nil; want an error", item, n)
		}
	}
}

// The developer guide's worked examples of capacity units
// (read-write-operations; transaction-apis, Capacity management for
// transactions).
func TestUnitsFollowTheDeveloperGuidesExamples(t *testing.T) {
	const kb = 1024
	cases := []struct {
		name string
		got  float64
		want float64
	}{
		{"write: 500 bytes costs the same as 1 KB", writeUnits(500), 1},
		{"write: an item of 1.6 KB is rounded up to 2 KB", writeUnits(1638), 2},
		{"write: exactly 1 KB", writeUnits(kb), 1},
		{"write: one byte over 1 KB", writeUnits(kb + 1), 2},
		{"write: 3 KB standard write", writeUnits(3 * kb), 3},
		{"write: 3 KB transactional write costs 6", 2 * writeUnits(3*kb), 6},
		{"write: a failed conditional write of an absent item costs 1", writeUnits(0), 1},
		{"write: failed condition, existing 300 KB vs new 310 KB is charged 310", writeUnits(max(300*kb, 310*kb)), 310},
		{"transaction: three 500-byte items cost 6", 3 * 2 * writeUnits(500), 6},
		{"read: 3,500 bytes costs the same as 4 KB", readUnits(3500, true), 1},
		{"read: 10 KB is rounded up to 12 KB", readUnits(10*kb, true), 3},
		{"read: 8 KB strongly consistent", readUnits(8*kb, true), 2},
		{"read: 8 KB eventually consistent", readUnits(8*kb, false), 1},
		{"read: 8 KB transactional", 2 * readUnits(8*kb, true), 4},
		{"read: a missing item still costs the minimum (strong)", readUnits(0, true), 1},
		{"read: a missing item still costs the minimum (eventual)", readUnits(0, false), 0.5},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
}

// ItemSize over the SDK's types agrees with the wire form, rule by rule.
func TestItemSizeOfSDKItems(t *testing.T) {
	item := map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "abc"},
		"n":  &types.AttributeValueMemberN{Value: "000120.500"},
		"b":  &types.AttributeValueMemberB{Value: []byte{0, 1, 2, 3, 4}},
		"ok": &types.AttributeValueMemberBOOL{Value: true},
		"z":  &types.AttributeValueMemberNULL{Value: true},
		"l":  &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "ab"}, &types.AttributeValueMemberBOOL{}}},
		"m":  &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k": &types.AttributeValueMemberS{Value: "ab"}}},
		"ss": &types.AttributeValueMemberSS{Value: []string{"a", "bcd"}},
		"ns": &types.AttributeValueMemberNS{Value: []string{"1", "22"}},
		"bs": &types.AttributeValueMemberBS{Value: [][]byte{{0}, {0, 1}}},
		"é日": &types.AttributeValueMemberS{Value: "x"},
	}
	wire := `{"pk":{"S":"abc"},"n":{"N":"000120.500"},"b":{"B":"AAECAwQ="},"ok":{"BOOL":true},"z":{"NULL":true},` +
		`"l":{"L":[{"S":"ab"},{"BOOL":false}]},"m":{"M":{"k":{"S":"ab"}}},"ss":{"SS":["a","bcd"]},"ns":{"NS":["1","22"]},` +
		`"bs":{"BS":["AA==","AAE="]},"é日":{"S":"x"}}`
	want, err := itemSize([]byte(wire))
	if err != nil {
		t.Fatal(err)
	}
	if got := ItemSize(item); got != want || got == 0 {
		t.Fatalf("ItemSize = %d; the wire form sizes %d", got, want)
	}
}

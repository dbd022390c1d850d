// Package payload makes the order lines the benchmarks put in events and
// outcomes: JSON with the shape of a real API response (repeated field
// names and words, and fresh identifiers, prices and timestamps), so that
// compression meets what it would meet in production. A run of one
// repeated character would compress a hundredfold and flatter it; random
// bytes would not compress at all.
package payload

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// Line is one order line.
type Line struct {
	ID        string `json:"id"`
	SKU       string `json:"sku"`
	Name      string `json:"name"`
	Quantity  int    `json:"quantity"`
	UnitPrice string `json:"unit_price"`
	Currency  string `json:"currency"`
	Tax       string `json:"tax"`
	ShippedAt string `json:"shipped_at"`
}

var words = []string{"organic", "cotton", "shirt", "steel", "bottle", "blue", "red", "large", "small",
	"premium", "wool", "socks", "leather", "wallet", "ceramic", "mug", "travel", "adapter", "linen",
	"towel", "bamboo", "brush", "glass", "jar", "canvas", "bag", "denim", "jacket", "silk", "scarf"}

// Text returns n bytes of the same order lines as text without quotes
// or backslashes (so that a JSON string holding it is n bytes plus its
// quotes), for example
//
//	id=8f14e45f-ceea-467f-a0e6-3c3b2f1d5e07 sku=SKU-48213 name=organic/cotton/shirt quantity=2 unit_price=19.99 currency=EUR tax=3.80 shipped_at=2026-03-14T10:22:51Z;
//
// It compresses about as the JSON lines do.
func Text(seed uint64, n int) string {
	var b strings.Builder
	for _, l := range Lines(seed, n+512) {
		fmt.Fprintf(&b, "id=%s sku=%s name=%s quantity=%d unit_price=%s currency=%s tax=%s shipped_at=%s; ",
			l.ID, l.SKU, strings.ReplaceAll(l.Name, " ", "/"), l.Quantity, l.UnitPrice, l.Currency, l.Tax, l.ShippedAt)
		if b.Len() >= n {
			break
		}
	}
	for b.Len() < n { // n beyond what the lines filled
		b.WriteString(Text(seed+1, n-b.Len()))
	}
	return b.String()[:n]
}

// Lines returns order lines whose JSON encoding (as a JSON array) is at
// most n bytes and within one line (about 190 bytes) of n; the same lines
// for the same seed.
func Lines(seed uint64, n int) []Line {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	lines := []Line{}
	size := len("[]")
	for {
		l := Line{
			ID:        fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", r.Uint32(), r.IntN(1<<16), r.IntN(1<<16), r.IntN(1<<16), r.Int64N(1<<48)),
			SKU:       fmt.Sprintf("SKU-%05d", r.IntN(100000)),
			Name:      words[r.IntN(len(words))] + " " + words[r.IntN(len(words))] + " " + words[r.IntN(len(words))],
			Quantity:  1 + r.IntN(9),
			UnitPrice: fmt.Sprintf("%d.%02d", r.IntN(500), r.IntN(100)),
			Currency:  "EUR",
			Tax:       fmt.Sprintf("%d.%02d", r.IntN(50), r.IntN(100)),
			ShippedAt: fmt.Sprintf("2026-%02d-%02dT%02d:%02d:%02dZ", 1+r.IntN(12), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60)),
		}
		b, _ := json.Marshal(l)
		add := len(b)
		if len(lines) > 0 {
			add++ // the comma
		}
		if size+add > n {
			return lines
		}
		lines = append(lines, l)
		size += add
	}
}

// Package idemenv reads a function's idempotency settings from its
// environment: the variables the CDK construct's Table.Bind sets
// (cdk/lambdaidemcdk), so that the DynamoDB store matches the table it was
// bound to — its name, its key and TTL attribute names — and the wrapper
// remembers completed keys for the bound retry horizon.
//
// It lives with the examples, not in the library: the library reads no
// environment variables (the team's style), and a function of your own can
// copy these few lines or read its configuration its own way.
//
//	IDEMPOTENCY_TABLE            the table's name (required)
//	IDEMPOTENCY_TTL              the retry horizon, a Go duration (default 24h)
//	IDEMPOTENCY_KEY_ATTR         the partition key attribute (default: the store's, "id")
//	IDEMPOTENCY_SORT_KEY_ATTR    the sort key attribute, for a table with one
//	IDEMPOTENCY_SORT_KEY_VALUE   the static sort key value (with IDEMPOTENCY_SORT_KEY_ATTR)
//	IDEMPOTENCY_EXPIRATION_ATTR  the TTL attribute (default: the store's, "expiration")
package idemenv

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lambdaidem/lambdaidem/dynamostore"
)

// The variables [Read] reads; the same names as lambdaidemcdk's Env*
// constants.
const (
	EnvTable          = "IDEMPOTENCY_TABLE"
	EnvTTL            = "IDEMPOTENCY_TTL"
	EnvKeyAttr        = "IDEMPOTENCY_KEY_ATTR"
	EnvSortKeyAttr    = "IDEMPOTENCY_SORT_KEY_ATTR"
	EnvSortKeyValue   = "IDEMPOTENCY_SORT_KEY_VALUE"
	EnvExpirationAttr = "IDEMPOTENCY_EXPIRATION_ATTR"
)

// DefaultHorizon is the retry horizon when IDEMPOTENCY_TTL is not set.
const DefaultHorizon = 24 * time.Hour

// Settings are the idempotency settings of one function.
type Settings struct {
	// Table is the idempotency table's name.
	Table string
	// Horizon is the retry horizon: how long a completed key is remembered
	// (lambdaidem.Options.RetryHorizon).
	Horizon time.Duration
	// KeyAttr, SortKeyAttr, SortKeyValue and ExpirationAttr are the store's
	// attribute options of the same names; "" keeps the store's default.
	KeyAttr, SortKeyAttr, SortKeyValue, ExpirationAttr string
}

// Read reads the settings through getenv (os.Getenv), reporting every missing
// or invalid variable at once, by name. A variable set to blanks counts as
// set to a bad value, not as unset: a deployment that meant to set it gets an
// error, not the default.
func Read(getenv func(string) string) (Settings, error) {
	s := Settings{
		Table:          getenv(EnvTable),
		Horizon:        DefaultHorizon,
		KeyAttr:        getenv(EnvKeyAttr),
		SortKeyAttr:    getenv(EnvSortKeyAttr),
		SortKeyValue:   getenv(EnvSortKeyValue),
		ExpirationAttr: getenv(EnvExpirationAttr),
	}
	var errs []error
	if s.Table == "" {
		errs = append(errs, fmt.Errorf("%s is not set (the idempotency table's name)", EnvTable))
	}
	for name, v := range map[string]string{EnvTable: s.Table, EnvKeyAttr: s.KeyAttr, EnvSortKeyAttr: s.SortKeyAttr,
		EnvSortKeyValue: s.SortKeyValue, EnvExpirationAttr: s.ExpirationAttr} {
		if v != "" && strings.TrimSpace(v) != v {
			errs = append(errs, fmt.Errorf("%s=%q has leading or trailing blanks", name, v))
		}
	}
	if (s.SortKeyAttr == "") != (s.SortKeyValue == "") {
		errs = append(errs, fmt.Errorf("%s and %s are set together or not at all (got %q and %q)",
			EnvSortKeyAttr, EnvSortKeyValue, s.SortKeyAttr, s.SortKeyValue))
	}
	if v := getenv(EnvTTL); v != "" {
		d, err := time.ParseDuration(v)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s=%q is not a Go duration such as 24h or 96h", EnvTTL, v))
		case d < time.Second:
			errs = append(errs, fmt.Errorf("%s=%q must be at least one second", EnvTTL, v))
		default:
			s.Horizon = d
		}
	}
	return s, errors.Join(errs...)
}

// StoreOptions sets the attribute names of s on o, keeping the store's
// defaults for those s leaves empty: pass it to dynamostore.New as an
// option.
func (s Settings) StoreOptions(o *dynamostore.Options) {
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&o.KeyAttr, s.KeyAttr)
	set(&o.SortKeyAttr, s.SortKeyAttr)
	set(&o.SortKeyValue, s.SortKeyValue)
	set(&o.ExpirationAttr, s.ExpirationAttr)
}

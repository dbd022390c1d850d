package ddbtest

import (
	"strconv"
	"strings"
)

// DynamoDB's numbers ("Supported data types and naming rules in Amazon
// DynamoDB", Number; "Constraints in Amazon DynamoDB", Data types): up to
// 38 significant digits; a positive magnitude from 1E-130 to
// 9.9999999999999999999999999999999999999E+125, a negative one alike, or
// zero. "Leading and trailing zeroes are trimmed" ("DynamoDB item sizes and
// formats"): DynamoDB keeps the value, not the text, and returns it in
// plain decimal notation — 00042 as 42, 1.0 as 1, -0 as 0, 1e2 as 100,
// 1E-3 as 0.001 (measured on Dynoxide, which passes the conformance
// suite's number tests recorded on DynamoDB).

// refusal is a ValidationException's message, worded as DynamoDB words
// it.
type refusal string

func (r refusal) Error() string { return string(r) }

// The refusals of a number that DynamoDB cannot store.
const (
	errNotANumber     refusal = "The parameter cannot be converted to a numeric value"
	errNumberDigits   refusal = "Attempting to store more than 38 significant digits in a Number"
	errNumberOverflow refusal = "Number overflow. Attempting to store a number with magnitude larger than supported range"
	errNumberUnder    refusal = "Number underflow. Attempting to store a number with magnitude smaller than supported range"
)

// The limits of a DynamoDB number.
const (
	maxNumberDigits = 38
	maxNumberOrder  = 125  // the largest magnitude is below 1E+126
	minNumberOrder  = -130 // the smallest non-zero magnitude is 1E-130
)

// normalNumber returns s as DynamoDB stores and returns it, or the reason
// DynamoDB refuses it.
func normalNumber(s string) (string, error) {
	neg, digits, exp, err := parseNumber(s)
	if err != nil {
		return "", err
	}
	// digits has no leading zero; trim the trailing ones into exp.
	trimmed := strings.TrimRight(digits, "0")
	exp += len(digits) - len(trimmed)
	digits = trimmed
	if digits == "" {
		return "0", nil
	}
	if len(digits) > maxNumberDigits {
		return "", errNumberDigits
	}
	order := len(digits) + exp - 1 // the power of ten of the leading digit
	switch {
	case order > maxNumberOrder:
		return "", errNumberOverflow
	case order < minNumberOrder:
		return "", errNumberUnder
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	switch point := len(digits) + exp; {
	case exp >= 0:
		b.WriteString(digits)
		b.WriteString(strings.Repeat("0", exp))
	case point > 0:
		b.WriteString(digits[:point])
		b.WriteByte('.')
		b.WriteString(digits[point:])
	default:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", -point))
		b.WriteString(digits)
	}
	return b.String(), nil
}

// parseNumber splits a number's text ([+-]digits[.digits][e[+-]digits])
// into its sign, its digits without leading zeroes and the power of ten
// they are to be multiplied by.
func parseNumber(s string) (neg bool, digits string, exp int, err error) {
	rest := s
	if rest != "" && (rest[0] == '+' || rest[0] == '-') {
		neg = rest[0] == '-'
		rest = rest[1:]
	}
	mantissa, expText, hasExp := strings.Cut(strings.ToLower(rest), "e")
	whole, frac, _ := strings.Cut(mantissa, ".")
	if whole+frac == "" || !allDigits(whole) || !allDigits(frac) {
		return false, "", 0, errNotANumber
	}
	if hasExp {
		unsigned := strings.TrimLeft(expText, "+-")
		if unsigned == "" || len(expText)-len(unsigned) > 1 || !allDigits(unsigned) {
			return false, "", 0, errNotANumber
		}
		e, perr := strconv.Atoi(expText)
		if perr != nil { // an exponent too large to parse: out of range either way
			if strings.HasPrefix(expText, "-") {
				return false, "", 0, errNumberUnder
			}
			return false, "", 0, errNumberOverflow
		}
		exp = e
	}
	digits = strings.TrimLeft(whole+frac, "0")
	exp -= len(frac)
	return neg, digits, exp, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

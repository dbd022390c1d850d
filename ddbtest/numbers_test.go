package ddbtest

import "testing"

// TestNormalNumber: numbers as DynamoDB stores and returns them, and the
// ones it refuses ("Constraints in Amazon DynamoDB", Data types: 38
// digits, 1E-130 to 9.9999999999999999999999999999999999999E+125).
func TestNormalNumber(t *testing.T) {
	for in, want := range map[string]string{
		"42": "42", "00042": "42", "1.0": "1", "-0": "0", "0.000": "0", "1e2": "100", "1E-3": "0.001",
		"-00.50e+3": "-500", "1.": "1", "-.5": "-0.5", "+5": "5", "123.4500e-2": "1.2345",
		"12345678901234567890123456789012345678000":    "12345678901234567890123456789012345678000",
		"9.9999999999999999999999999999999999999E+125": "99999999999999999999999999999999999999" + zeros(88),
		"1E-130": "0." + zeros(129) + "1",
	} {
		if got, err := normalNumber(in); err != nil || got != want {
			t.Errorf("normalNumber(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]error{
		"123456789012345678901234567890123456789": errNumberDigits,
		"1E+126": errNumberOverflow, "-1E+126": errNumberOverflow, "1E-131": errNumberUnder,
		"1e99999999999999999999": errNumberOverflow, "1e-99999999999999999999": errNumberUnder,
		"abc": errNotANumber, " 1": errNotANumber, "": errNotANumber, ".": errNotANumber, "1e": errNotANumber,
		"1e+-2": errNotANumber, "0x10": errNotANumber, "1_000": errNotANumber, "Inf": errNotANumber,
	} {
		if got, err := normalNumber(in); err != want {
			t.Errorf("normalNumber(%q) = %q, %v; want %v", in, got, err, want)
		}
	}
}

func zeros(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '0'
	}
	return string(b)
}

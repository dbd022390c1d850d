package cdktest

import (
	"os"
	"testing"

	"github.com/aws/jsii-runtime-go"
)

// Main runs a package's tests with the jsii runtime's end-of-life banner for the
// machine's Node.js silenced (it is printed on every start and says nothing
// about the code under test), and closes the runtime afterwards.
func Main(m *testing.M) {
	const banner = "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION"
	if os.Getenv(banner) == "" {
		os.Setenv(banner, "18,20")
	}
	code := m.Run()
	jsii.Close()
	os.Exit(code)
}

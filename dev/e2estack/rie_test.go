package e2estack

import (
	"fmt"
	"net"
	"testing"
)

// TestStartLogTellsATakenPort: the emulator is a Go program and reports a
// port it cannot bind with the net package's error; startLog must recognise
// exactly that error (StartFunction then retries on fresh ports) and nothing
// else (any other early exit is returned at once).
func TestStartLogTellsATakenPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = net.Listen("tcp", l.Addr().String())
	if err == nil {
		t.Fatal("a second listener on a taken port succeeded")
	}
	cases := []struct {
		name string
		log  string
		want bool
	}{
		{"runtime API port taken", fmt.Sprintf("level=ERROR msg=\"rie failed\" err=\"could not start runtime api server: %v\"\n", err), true},
		{"other early exit", "level=ERROR msg=\"rie failed\" err=\"fork/exec ./bootstrap: permission denied\"\n", false},
		{"nothing printed", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s startLog
			fmt.Fprint(&s, c.log)
			if got := s.portTaken(); got != c.want {
				t.Errorf("portTaken() = %v for %q, want %v", got, c.log, c.want)
			}
		})
	}
}

package rie

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// KillRuntime crashes the function: it kills the emulator's child
// processes (the bootstrap) with SIGKILL, as an out-of-memory kill or a
// fatal runtime error would. The emulator reports the invocation in
// progress as failed (Runtime.ExitError). Linux only.
func (f *Function) KillRuntime() error {
	if f.cmd == nil || f.cmd.Process == nil {
		return errors.New("rie: function not started")
	}
	kids, err := children(f.cmd.Process.Pid)
	if err != nil {
		return err
	}
	if len(kids) == 0 {
		return fmt.Errorf("rie: %s has no running bootstrap to kill", f.name)
	}
	for _, pid := range kids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return nil
}

// children returns the pids whose parent is ppid, from /proc.
func children(ppid int) ([]int, error) {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return nil, err
	}
	var out []int
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the process ended meanwhile
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(s[i+1:])
		if len(fields) < 2 {
			continue
		}
		if pp, _ := strconv.Atoi(fields[1]); pp == ppid {
			pid, _ := strconv.Atoi(strings.Fields(s)[0])
			out = append(out, pid)
		}
	}
	return out, nil
}

package procfs

import (
	"os"
	"os/exec"
	"testing"
)

// TestTable: the table lists this process and a child, each with what
// ReadStat says of it, and the child's parent and group.
func TestTable(t *testing.T) {
	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	procs, err := Table()
	if err != nil {
		t.Fatal(err)
	}
	found := map[int]Stat{}
	for _, p := range procs {
		found[p.Pid] = p.Stat
	}
	self, ok := ReadStat(os.Getpid())
	if !ok || found[os.Getpid()].Start != self.Start || found[os.Getpid()].PPid != os.Getppid() {
		t.Fatalf("self: table %+v, ReadStat %+v %v", found[os.Getpid()], self, ok)
	}
	child, ok := found[cmd.Process.Pid]
	if !ok || child.PPid != os.Getpid() || child.Pgrp != self.Pgrp || child.Dead() || child.Start < self.Start {
		t.Fatalf("child %d: %+v %v (self %+v)", cmd.Process.Pid, child, ok, self)
	}
}

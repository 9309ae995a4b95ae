package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/host"
	"github.com/dsh-go/dsh/internal/procfs"
	"github.com/dsh-go/dsh/internal/sshtest"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tool"
	"github.com/dsh-go/dsh/tool/bashtool"
)

// TestStandardOverSSH: with executor ssh the stack runs commands on the
// host through the SSH executor (there is no local one); a background
// task is read with task_output as over the local executor, and the spill
// files a session was told of are removed on the remote host when it
// ends.
func TestStandardOverSSH(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{})
	c := srv.Config(t)
	c.MaxOutputBytes = 100
	st, err := host.Standard(config.File{Executor: config.ExecutorSSH, SSH: c})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.SSH == nil || st.Local != nil || st.Executor != st.SSH {
		t.Fatalf("executors: local %v ssh %v", st.Local, st.SSH)
	}
	sess := session.New("s", "")
	call := func(name string, args map[string]any) tool.Result {
		t.Helper()
		raw, _ := json.Marshal(args)
		return st.Tools.Execute(context.Background(), tool.Call{Name: name, Args: raw, Session: sess})
	}
	if res := call("bash", map[string]any{"command": "echo one; sleep 0.2; echo two", "description": "count slowly", "run_in_background": true}); res.Text() != "started background task bash-1" {
		t.Fatalf("start: %q", res.Text())
	}
	res := call("task_output", map[string]any{"task_id": "bash-1", "wait": true, "timeout_ms": 10000})
	if res.Text() != "one\ntwo\n[status: completed, exit code: 0]" {
		t.Fatalf("task_output: %q", res.Text())
	}
	res = call("bash", map[string]any{"command": "seq 1 1000", "description": "count far"})
	s, _ := res.Structured.(bashtool.Structured)
	if res.IsError || s.Stdout == nil || !strings.HasSuffix(res.Text(), "[output truncated; full output: "+s.Stdout.SpillPath+"]") {
		t.Fatalf("spill: %+v", res)
	}
	if _, err := os.Stat(s.Stdout.SpillPath); err != nil {
		t.Fatal(err)
	}
	sess.End()
	if _, err := os.Stat(s.Stdout.SpillPath); !os.IsNotExist(err) {
		t.Fatalf("the session's remote spill file survived its end: %v", err)
	}
}

// TestStartedWaitsForTheHooksExecutor: with executor ssh and hooks, the
// hooks' local executor has a start-up of its own; the stack's Started
// waits for it too (dsh run asks on the terminal after what it logs). Its
// spill sweep removing a dead dsh's directory shows it ran.
func TestStartedWaitsForTheHooksExecutor(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{})
	spill := t.TempDir()
	dead := filepath.Join(spill, fmt.Sprintf("dsh-out-%d-999999-1-abcdef", procfs.PidNamespace()))
	if err := os.Mkdir(dead, 0o700); err != nil {
		t.Fatal(err)
	}
	hook := config.HookGroup{Hooks: []config.Hook{{Type: "command", Command: "true"}}}
	st, err := host.Standard(config.File{Executor: config.ExecutorSSH, SSH: srv.Config(t),
		Local: config.Local{SpillDir: spill}, Hooks: config.Hooks{PostToolUse: []config.HookGroup{hook}}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.Started()
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Fatalf("after Started, the hooks executor's start-up has not swept %s: %v", dead, err)
	}
}

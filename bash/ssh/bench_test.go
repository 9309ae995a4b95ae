package ssh

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/internal/executortest"
	"github.com/dsh-go/dsh/internal/sshtest"
)

// The benchmarks of issue 17. Run them with
//
//	go test -run '^$' -bench . -count 6 ./bash/ssh/
//
// Each compares the executor with OpenSSH's own client against the same
// test sshd, alternating the two in every iteration so that a shared
// machine's drift hits them alike; ns/op is the sum, the metrics split
// it. A third column, "bare", runs the same command on a plain session
// of the executor's own connection, without the wrapper and the
// collectors: what golang.org/x/crypto/ssh alone costs, so that the
// closing figures can tell dsh's part from the library's.

// openssh runs OpenSSH's client against srv with a ControlMaster whose
// socket lives in a directory of b's, so that every call after the first
// is multiplexed over one connection, as the executor's are.
type openssh struct {
	args []string
}

func newOpenSSH(b *testing.B, srv *sshtest.Server) *openssh {
	b.Helper()
	if _, err := exec.LookPath("ssh"); err != nil {
		b.Skip("OpenSSH's client (ssh) is not installed")
	}
	dir, err := os.MkdirTemp("", "dsh-cm-") // short: a socket path has a limit
	if err != nil {
		b.Fatal(err)
	}
	o := &openssh{args: []string{
		"-p", strconv.Itoa(srv.Port), "-i", srv.Identity,
		"-o", "UserKnownHostsFile=" + srv.KnownHosts, "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes",
		"-o", "ControlMaster=auto", "-o", "ControlPath=" + filepath.Join(dir, "cm"), "-o", "ControlPersist=600",
		srv.User + "@" + srv.Host,
	}}
	b.Cleanup(func() {
		_ = exec.Command("ssh", append([]string{"-O", "exit"}, o.args...)...).Run()
		_ = os.RemoveAll(dir)
	})
	o.run(b, "true") // the master
	return o
}

// run runs command with ssh, its stdout going to /dev/null.
func (o *openssh) run(b *testing.B, command string) {
	b.Helper()
	var stderr strings.Builder
	cmd := exec.Command("ssh", append(o.args, command)...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("ssh %s: %v: %s", command, err, stderr.String())
	}
}

// bare runs command on a session of its own on one of e's connections
// (the first Run dialled it), stdout and stderr discarded: no wrapper,
// no collectors, no frames. sshd runs it through the login shell, as for
// ssh.
func bare(b *testing.B, e *Executor, command string) {
	b.Helper()
	e.pool.mu.Lock()
	c := e.pool.conns[0]
	e.pool.mu.Unlock()
	sess, err := c.client.NewSession()
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	var stderr strings.Builder
	sess.Stderr = &stderr
	if err := sess.Run(command); err != nil {
		b.Fatalf("bare session %s: %v: %s", command, err, stderr.String())
	}
}

func benchSetup(b *testing.B) (*sshtest.Server, *Executor) {
	b.Helper()
	srv := sshtest.Start(b, sshtest.Options{})
	cfg := srv.Config(b)
	cfg.Grace, cfg.Keepalive = 0, 0 // the defaults
	e, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Close() })
	return srv, e
}

func benchRun(b *testing.B, e *Executor, command string) bash.Result {
	spec, err := e.Resolve(bash.Request{Command: command})
	if err != nil {
		b.Fatal(err)
	}
	r, err := bash.Run(context.Background(), e, spec)
	if err != nil || r.ExitCode == nil || *r.ExitCode != 0 {
		b.Fatal(r, err)
	}
	return r
}

// BenchmarkCallTrue compares a Run of `true` over an established
// connection with `ssh host true` through a ControlMaster. Goal: Run
// within 1.2× of ssh.
func BenchmarkCallTrue(b *testing.B) {
	srv, e := benchSetup(b)
	o := newOpenSSH(b, srv)
	benchRun(b, e, "true") // the connection
	var ssh, run, raw time.Duration
	for b.Loop() {
		t0 := time.Now()
		o.run(b, "true")
		t1 := time.Now()
		benchRun(b, e, "true")
		t2 := time.Now()
		bare(b, e, "true")
		ssh, run, raw = ssh+t1.Sub(t0), run+t2.Sub(t1), raw+time.Since(t2)
	}
	perOp := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N) }
	b.ReportMetric(perOp(ssh), "ssh-ns/op")
	b.ReportMetric(perOp(run), "Run-ns/op")
	b.ReportMetric(perOp(raw), "bare-ns/op")
	b.ReportMetric(float64(run)/float64(ssh), "Run/ssh")
	b.ReportMetric(float64(raw)/float64(ssh), "bare/ssh")
}

// BenchmarkStream1GiB compares the throughput of a Run of `cat` of a 1
// GiB file with `ssh host 'cat bigfile' > /dev/null`, with the default
// caps (the Run keeps 64000 bytes and writes a 64 MiB spill file back to
// the host). Goal: Run's throughput at least 80% of ssh's. The heap
// metrics are the Run's.
func BenchmarkStream1GiB(b *testing.B) {
	const size = 1 << 30
	srv, e := benchSetup(b)
	o := newOpenSSH(b, srv)
	big := filepath.Join(srv.SharedDir(b), "bigfile")
	benchRun(b, e, fmt.Sprintf("head -c %d /dev/zero > %s", size, big))
	o.run(b, "cat "+big+" > /dev/null") // into the page cache
	heap := executortest.StartHeapSampler()
	var ssh, run, raw time.Duration
	for b.Loop() {
		t0 := time.Now()
		o.run(b, "cat "+big)
		t1 := time.Now()
		r := benchRun(b, e, "cat "+big)
		run += time.Since(t1)
		ssh += t1.Sub(t0)
		if r.Stdout.TotalBytes != size {
			b.Fatalf("%d bytes", r.Stdout.TotalBytes)
		}
		b.StopTimer()
		e.RemoveSpills(r.Stdout.SpillPath)
		b.StartTimer()
		t2 := time.Now()
		bare(b, e, "cat "+big)
		raw += time.Since(t2)
	}
	heap.Report(b)
	mibps := func(d time.Duration) float64 { return float64(size) * float64(b.N) / d.Seconds() / (1 << 20) }
	b.ReportMetric(mibps(ssh), "ssh-MiB/s")
	b.ReportMetric(mibps(run), "Run-MiB/s")
	b.ReportMetric(mibps(raw), "bare-MiB/s")
	b.ReportMetric(float64(ssh)/float64(run), "Run/ssh-throughput")
	b.ReportMetric(float64(ssh)/float64(raw), "bare/ssh-throughput")
}

package ssh

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	gossh "golang.org/x/crypto/ssh"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/executortest"
	"github.com/dsh-go/dsh/internal/procfs"
	"github.com/dsh-go/dsh/internal/proctest"
	"github.com/dsh-go/dsh/internal/sshtest"
)

// run resolves and runs command.
func runIt(t *testing.T, e *Executor, command string, timeoutMs float64) (bash.Result, error) {
	t.Helper()
	req := bash.Request{Command: command}
	if timeoutMs > 0 {
		req.TimeoutMs = &timeoutMs
	}
	spec, err := e.Resolve(req)
	if err != nil {
		t.Fatal(err)
	}
	return bash.Run(context.Background(), e, spec)
}

func mustRun(t *testing.T, e *Executor, command string) bash.Result {
	t.Helper()
	r, err := runIt(t, e, command, 0)
	if err != nil {
		t.Fatalf("Run(%q): %v", command, err)
	}
	return r
}

func otherKey(t *testing.T) gossh.PublicKey {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := gossh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestHostKeyVerification: a host whose key changed, and a host that is
// not in known_hosts, are refused, and the error names the host, the key
// and the known_hosts file; nothing runs.
func TestHostKeyVerification(t *testing.T) {
	t.Parallel()
	srv := sshtest.Start(t, sshtest.Options{})
	wrong := otherKey(t)
	for _, tc := range []struct {
		name  string
		kh    string
		wants []string
	}{
		{"changed", srv.KnownHostsFor(t, wrong, srv.Port), []string{
			"ssh: host key of 127.0.0.1 changed: it is ssh-ed25519 " + gossh.FingerprintSHA256(srv.HostKey),
			":1 has ssh-ed25519 " + gossh.FingerprintSHA256(wrong) + "; refusing to connect",
		}},
		{"unknown", srv.KnownHostsFor(t, wrong), []string{
			"ssh: host key of 127.0.0.1 (ssh-ed25519 " + gossh.FingerprintSHA256(srv.HostKey) + ") is unknown: it is not in ",
			"refusing to connect",
			fmt.Sprintf("ssh-keyscan -p %d 127.0.0.1 >> ", srv.Port),
		}},
		{"another port's key", srv.KnownHostsFor(t, srv.HostKey, srv.Port+1), []string{"is unknown: it is not in "}},
		{"revoked", revokedKnownHosts(t, srv), []string{
			"ssh: host key of 127.0.0.1 (ssh-ed25519 " + gossh.FingerprintSHA256(srv.HostKey) + ") is revoked in ",
			":1; refusing to connect",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := srv.Config(t)
			cfg.KnownHosts = tc.kh
			e := newExecutor(t, cfg)
			marker := filepath.Join(srv.SharedDir(t), "ran")
			_, err := runIt(t, e, "touch "+marker, 0)
			if err == nil {
				t.Fatal("the command ran")
			}
			for _, want := range append(tc.wants, tc.kh) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the command ran on a host whose key was refused")
			}
		})
	}
}

// TestHostKeyAlgorithmsOfTheKnownKeys: a host with keys of two types
// whose known_hosts entry holds only one of them is reached with that
// one, whichever it is: the client offers only the algorithms of the
// known keys, so the server does not present a key of the other type,
// which known_hosts would call a changed key.
func TestHostKeyAlgorithmsOfTheKnownKeys(t *testing.T) {
	t.Parallel()
	srv := sshtest.Start(t, sshtest.Options{ECDSAHostKey: true})
	for _, known := range []gossh.PublicKey{srv.HostKey, srv.ECDSAHostKey} {
		t.Run(known.Type(), func(t *testing.T) {
			cfg := srv.Config(t)
			cfg.KnownHosts = srv.KnownHostsFor(t, known, srv.Port)
			e := newExecutor(t, cfg)
			if r := mustRun(t, e, "echo in"); r.Stdout.Text != "in\n" {
				t.Fatalf("got %+v", r)
			}
			rep, err := e.Check(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if want := known.Type() + " " + gossh.FingerprintSHA256(known); rep.HostKey != want {
				t.Fatalf("accepted host key %q, want %q", rep.HostKey, want)
			}
		})
	}
}

// revokedKnownHosts is a known_hosts file that revokes srv's host key
// (OpenSSH's @revoked marker) and lists it as the host's key too.
func revokedKnownHosts(t *testing.T, srv *sshtest.Server) string {
	t.Helper()
	kh := srv.KnownHostsFor(t, srv.HostKey, srv.Port)
	line := "@revoked * " + strings.TrimSpace(string(gossh.MarshalAuthorizedKey(srv.HostKey)))
	listed, err := os.ReadFile(kh)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kh, []byte(line+"\n"+string(listed)), 0o644); err != nil {
		t.Fatal(err)
	}
	return kh
}

// TestIdentityFileRefused: an encrypted identity file (nobody could type
// its passphrase) and a missing one are refused, naming the file, before
// anything is dialled.
func TestIdentityFileRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	kh := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(kh, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := gossh.MarshalPrivateKeyWithPassphrase(priv, "", []byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	encrypted := filepath.Join(dir, "id_encrypted")
	if err := os.WriteFile(encrypted, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "id_missing")
	for path, want := range map[string]string{
		encrypted: "ssh: identity file " + encrypted + " is encrypted: add it to the SSH agent and leave ssh.identityFile unset",
		missing:   "ssh: identity file " + missing + ": no such file or directory",
	} {
		// A host nobody can dial: the refusal comes before the dial.
		e := newExecutor(t, config.SSH{Host: "dsh-no-such-host.invalid", KnownHosts: kh, IdentityFile: path})
		if _, err := runIt(t, e, "true", 0); err == nil || err.Error() != want {
			t.Errorf("err = %v, want %q", err, want)
		}
	}
}

func TestNewRefuses(t *testing.T) {
	t.Parallel()
	kh := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(kh, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cfg  config.SSH
		want string
	}{
		{config.SSH{}, "ssh: host must be set"},
		{config.SSH{Host: "h", KnownHosts: kh, Grace: -time.Millisecond}, "ssh: graceMs must be a positive finite number"},
		{config.SSH{Host: "h", KnownHosts: kh, MaxOutputBytes: 10, KeepHeadBytes: new(int64(10))}, "ssh: keepHeadBytes must be smaller than maxOutputBytes"},
		{config.SSH{Host: "h", KnownHosts: kh, Env: config.SSHEnv{Set: map[string]string{"A-B": "1"}}}, `ssh: env.set name "A-B" is not a valid variable name`},
		{config.SSH{Host: "h", KnownHosts: kh + ".missing"}, "ssh: known_hosts file " + kh + ".missing: no such file or directory"},
	} {
		if _, err := New(tc.cfg); err == nil || err.Error() != tc.want {
			t.Errorf("%+v: err = %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	kh := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(kh, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	home, err := New(config.SSH{Host: "h", KnownHosts: kh, Timeout: 2 * time.Second, MaxTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cwd, err := New(config.SSH{Host: "h", KnownHosts: kh, Cwd: "/srv/work"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		e    *Executor
		req  bash.Request
		want bash.Spec
		err  string
	}{
		// No workdir and no ssh.cwd: empty, the remote user's home.
		{"the remote home", home, bash.Request{Command: "x"}, bash.Spec{Command: "x", Timeout: 2000 * time.Millisecond}, ""},
		{"ssh.cwd", cwd, bash.Request{Command: "x"}, bash.Spec{Command: "x", Timeout: 120000 * time.Millisecond, Workdir: "/srv/work"}, ""},
		{"given", cwd, bash.Request{Workdir: "rel", TimeoutMs: new(0.5)}, bash.Spec{Timeout: 1 * time.Millisecond, Workdir: "rel"}, ""},
		{"clamped", home, bash.Request{TimeoutMs: new(1e9)}, bash.Spec{Timeout: 5000 * time.Millisecond}, ""},
		{"stdin and env kept", home, bash.Request{Stdin: []byte{}, Env: map[string]string{"A": "1"}}, bash.Spec{Timeout: 2000 * time.Millisecond, Stdin: []byte{}, Env: map[string]string{"A": "1"}}, ""},
		{"zero", home, bash.Request{TimeoutMs: new(0.0)}, bash.Spec{}, "ssh: request.timeoutMs must be a positive finite number"},
	} {
		got, err := tc.e.Resolve(tc.req)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: err = %v", tc.name, err)
			}
			continue
		}
		if diff := cmp.Diff(tc.want, got); err != nil || diff != "" {
			t.Errorf("%s: %v (-want +got)\n%s", tc.name, err, diff)
		}
	}
	for _, e := range []*Executor{home, cwd} {
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	}
}

// TestRefusedSpecs: what cannot reach a remote shell is refused before
// anything runs.
func TestRefusedSpecs(t *testing.T) {
	t.Parallel()
	srv := sshtest.Start(t, sshtest.Options{})
	e := newExecutor(t, srv.Config(t))
	for _, tc := range []struct {
		spec bash.Spec
		want string
	}{
		{bash.Spec{Command: "echo a\x00b", Timeout: 1000 * time.Millisecond}, "ssh: the command holds a NUL byte, which no shell can run"},
		{bash.Spec{Command: "true", Timeout: 1000 * time.Millisecond, Env: map[string]string{"A-B": "1"}}, `ssh: request env name "A-B" is not a valid variable name`},
		{bash.Spec{Command: "true", Timeout: 1000 * time.Millisecond, Env: map[string]string{"A": "\x00"}}, `ssh: request env value of "A" holds a NUL byte`},
	} {
		if _, err := bash.Run(context.Background(), e, tc.spec); err == nil || err.Error() != tc.want {
			t.Errorf("err = %v, want %q", err, tc.want)
		}
	}
}

// TestAgentAuth: without an identity file, the key comes from the agent
// at SSH_AUTH_SOCK. Not parallel: it sets the environment.
func TestAgentAuth(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{})
	t.Setenv("SSH_AUTH_SOCK", srv.Agent(t))
	cfg := srv.Config(t)
	cfg.IdentityFile = ""
	e := newExecutor(t, cfg)
	if r := mustRun(t, e, "id -un"); r.Stdout.Text != srv.User+"\n" {
		t.Fatalf("got %+v", r)
	}
	rep, err := e.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := "ssh-ed25519 " + gossh.FingerprintSHA256(srv.Signer.PublicKey()) + " (SSH agent)"; rep.Key != want {
		t.Fatalf("key %q, want %q", rep.Key, want)
	}

	t.Setenv("SSH_AUTH_SOCK", "")
	e = newExecutor(t, cfg)
	if _, err := runIt(t, e, "true", 0); err == nil || !strings.Contains(err.Error(), "no ssh.identityFile is configured and SSH_AUTH_SOCK is not set") {
		t.Fatalf("err = %v", err)
	}
}

// TestEnvironmentAsSSHGivesIt: nothing of dsh's environment reaches the
// command, the remote one is not scrubbed, and the fixed variables,
// env.set and the spec's env come on top, in that order. Not parallel:
// it sets dsh's environment.
func TestEnvironmentAsSSHGivesIt(t *testing.T) {
	t.Setenv("DSH_LOCAL_ONLY", "x")
	srv := sshtest.Start(t, sshtest.Options{})
	cfg := srv.Config(t)
	cfg.Env.Set["FROM_SET"] = "set"
	cfg.Env.Set["PAGER"] = "more"
	cfg.Env.Set["TRICKY"] = "a 'b' \"c\" $d `e` \\f\ng"
	e := newExecutor(t, cfg)
	spec, _ := e.Resolve(bash.Request{Command: "env -0", Env: map[string]string{"FROM_SPEC": "spec", "FROM_SET": "spec wins"}})
	r, err := bash.Run(context.Background(), e, spec)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for kv := range strings.SplitSeq(strings.TrimSuffix(r.Stdout.Text, "\x00"), "\x00") {
		k, v, _ := strings.Cut(kv, "=")
		got[k] = v
	}
	want := map[string]string{
		"NO_COLOR": "1", "TERM": "dumb", "PAGER": "more", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0",
		"FROM_SET": "spec wins", "FROM_SPEC": "spec", "TRICKY": cfg.Env.Set["TRICKY"], "USER": srv.User,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s=%q, want %q", k, got[k], v)
		}
	}
	for k := range got {
		if k == "DSH_LOCAL_ONLY" || strings.HasPrefix(k, "__dsh") {
			t.Errorf("%s reached the command", k)
		}
	}
	if got["SSH_CONNECTION"] == "" {
		t.Error("sshd's own variables were scrubbed")
	}
}

// groupMembers lists the live processes of process group pgid.
func groupMembers(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := procfs.ReadStat(pid); ok && !st.Dead() && st.Pgrp == pgid {
			out = append(out, pid)
		}
	}
	return out
}

// TestTimeoutKillsTheRemoteGroup: a timeout ends the whole remote process
// group, as the remote side sees it.
func TestTimeoutKillsTheRemoteGroup(t *testing.T) {
	t.Parallel()
	srv := sshtest.Start(t, sshtest.Options{})
	e := newExecutor(t, srv.Config(t))
	dir := srv.SharedDir(t)
	pg := filepath.Join(dir, "pg")
	// The timeout must come after bash set its trap: scaled, since on a
	// loaded machine 300 ms ran out before (SIGTERM killed the shell).
	timeout := float64(proctest.Scale(300*time.Millisecond) / time.Millisecond)
	r, err := runIt(t, e, "echo $$ > "+pg+"; sleep 60 & trap '' TERM; sleep 61 & wait", timeout)
	if err != nil || !r.TimedOut || r.Signal != "SIGKILL" {
		t.Fatalf("got %+v, %v", r, err)
	}
	pgid := proctest.ReadPid(t, pg)
	if left := groupMembers(pgid); len(left) > 0 {
		t.Fatalf("the remote group %d still has %v", pgid, left)
	}
}

// lossCase starts a foreground command and a background one that each
// leave a child, and returns their results once drop cut the connection,
// with the time of the drop and the remote process groups.
type lossCase struct {
	fgErr  error
	bg     bash.Process
	pgids  []int
	cutAt  time.Time
	failed time.Duration   // from the cut to the foreground call's error
	gone   []time.Duration // from the cut to each remote group's end
}

func runThroughLoss(t *testing.T, srv *sshtest.Server, e *Executor, cut func()) lossCase {
	t.Helper()
	dir := srv.SharedDir(t)
	var lc lossCase
	bgPg, fgPg := filepath.Join(dir, "bg"), filepath.Join(dir, "fg")
	lc.bg = executortest.Start(t, e, "sleep 60 & echo $$ > "+bgPg+"; wait")
	ready, reached := executortest.ReadyFifo(t, dir)
	spec, _ := e.Resolve(bash.Request{Command: "trap '' TERM; sleep 60 & echo $$ > " + fgPg + "; echo > " + ready + "; wait"})
	errc := make(chan error, 1)
	go func() { _, err := bash.Run(context.Background(), e, spec); errc <- err }()
	reached()
	lc.pgids = []int{proctest.ReadPid(t, bgPg), proctest.ReadPid(t, fgPg)}
	lc.cutAt = time.Now()
	cut()
	watched := watchGroups(lc.pgids, lc.cutAt)
	select {
	case lc.fgErr = <-errc:
		lc.failed = time.Since(lc.cutAt)
	case <-time.After(proctest.Wait):
		t.Fatal("the call did not fail after its connection dropped")
	}
	executortest.Wait(t, lc.bg)
	lc.gone = <-watched
	return lc
}

// watchGroups looks at each process group every 10 ms (nothing tells the
// test when a process of another session ends) and sends how long after
// from each was empty, or -1 for one still there after proctest.Wait.
func watchGroups(pgids []int, from time.Time) <-chan []time.Duration {
	out := make(chan []time.Duration, 1)
	go func() {
		gone := make([]time.Duration, len(pgids))
		for i, pg := range pgids {
			gone[i] = -1
			if proctest.Within(proctest.Wait, func() bool { return len(groupMembers(pg)) == 0 }) {
				gone[i] = time.Since(from)
			}
		}
		out <- gone
	}()
	return out
}

// slack is what a loaded test machine may add to a bound it measures:
// the 10 ms looks, scheduling, a process's exit.
var slack = proctest.Scale(200 * time.Millisecond)

// checkLoss checks what a dropped connection must leave: the calls
// failed with the exact error, and no remote process outlives the drop by
// more than 3 keep-alive intervals and the grace. The log has the real
// figures; the check allows half an interval more, not slack alone: on a
// loaded machine the watchdog's looks at /proc (a bash reading every
// process's stat) and the process's exit took 0.2 s more than the bound.
// Half an interval and the slack still fail a watchdog that waited for a
// fourth missed heartbeat (checked: the cut comes soon after the run's
// first heartbeat, and the trapped group then went 4.5 s after it, against
// 4.2 s allowed; with DSH_TEST_SLOWDOWN=3 12.5 s against 11.6 s). The
// slack is there for the scaled runs: under 4 busy loops the group went
// 11.2 s after the drop, against 11 s allowed without it.
func checkLoss(t *testing.T, lc lossCase, cfg config.SSH) {
	t.Helper()
	want := "ssh: connection to " + cfg.Host + " lost"
	if lc.fgErr == nil || lc.fgErr.Error() != want {
		t.Errorf("foreground: err = %v, want %q", lc.fgErr, want)
	}
	if st := lc.bg.State(); st.Status != bash.StatusKilled || st.Err == nil || st.Err.Error() != want {
		t.Errorf("background: %+v", st)
	}
	bound := 3*cfg.Keepalive + cfg.Grace
	for i, pg := range lc.pgids {
		gone := lc.gone[i]
		t.Logf("remote group %d gone %v after the drop (bound 3 × keepaliveMs + graceMs = %v); the call failed after %v", pg, gone, bound, lc.failed)
		switch {
		case gone < 0:
			t.Errorf("remote group %d is still there %v after the drop (bound %v)", pg, proctest.Wait, bound)
		case gone > bound+cfg.Keepalive/2+slack:
			t.Errorf("remote group %d outlived the drop by %v, more than %v, half a keep-alive interval and %v", pg, gone, bound, slack)
		}
	}
}

// TestDroppedConnection: the sshd process serving the connection dies.
// The calls in flight fail at once, the remote watchdogs see their stdin
// end and kill the commands, and the next call dials anew.
func TestDroppedConnection(t *testing.T) {
	t.Parallel()
	srv := sshtest.Start(t, sshtest.Options{})
	cfg := srv.Config(t)
	e := newExecutor(t, cfg)
	lc := runThroughLoss(t, srv, e, func() {
		if srv.KillConnections() == 0 {
			t.Fatal("no sshd connection process to kill")
		}
	})
	checkLoss(t, lc, cfg)
	if r := mustRun(t, e, "echo again"); r.Stdout.Text != "again\n" {
		t.Fatalf("after the loss: %+v", r)
	}
}

// checkNoticedByKeepalive checks that a half-open connection failed its
// call through an unanswered keep-alive, 3 intervals after one was sent,
// not at once: nothing on the wire tells of a half-open connection. The
// keep-alive sent last may have left just before the drop, unanswered yet
// (a loaded sshd answers tens of milliseconds late), so the call may fail
// a little before 3 intervals after the drop: half an interval is allowed
// for it.
func checkNoticedByKeepalive(t *testing.T, lc lossCase, cfg config.SSH) {
	t.Helper()
	interval := cfg.Keepalive
	if lc.failed < 3*interval-interval/2 {
		t.Errorf("the call failed %v after the drop, well before 3 keep-alive intervals", lc.failed)
	}
}

// TestHalfOpenConnection: every packet stops, nothing closes (a proxy
// stops forwarding). dsh notices when its keep-alives go unanswered for 3
// intervals; the remote watchdogs when they miss 3 heartbeats.
func TestHalfOpenConnection(t *testing.T) {
	t.Parallel()
	srv := sshtest.Start(t, sshtest.Options{})
	proxy := srv.Proxy(t)
	cfg := srv.Config(t)
	cfg.Port = proxy.Port
	cfg.KnownHosts = srv.KnownHostsFor(t, srv.HostKey, proxy.Port)
	cfg.Grace = 500 * time.Millisecond
	e := newExecutor(t, cfg)
	lc := runThroughLoss(t, srv, e, proxy.Freeze)
	checkNoticedByKeepalive(t, lc, cfg)
	checkLoss(t, lc, cfg)
}

// TestHalfOpenByDroppedPackets: as TestHalfOpenConnection, with the
// packets dropped by the kernel rather than held by a proxy: sshd runs in
// a network namespace of its own, and its end of the veth pair goes down
// mid-call. Neither side gets a packet, a reset or an error.
func TestHalfOpenByDroppedPackets(t *testing.T) {
	t.Parallel()
	srv := sshtest.Start(t, sshtest.Options{Netns: true})
	cfg := srv.Config(t)
	cfg.Grace = 500 * time.Millisecond
	e := newExecutor(t, cfg)
	lc := runThroughLoss(t, srv, e, func() { srv.CutNetwork(t) })
	checkNoticedByKeepalive(t, lc, cfg)
	checkLoss(t, lc, cfg)
}

// TestManyCommandsOnOneConnection: 100 concurrent commands share one
// connection when the server allows it; it is dialled by the first.
func TestManyCommandsOnOneConnection(t *testing.T) {
	t.Parallel()
	srv := sshtest.Start(t, sshtest.Options{MaxSessions: 200})
	cfg := srv.Config(t)
	cfg.MaxConnections = 1
	cfg.Keepalive = loadKeepalive()
	e := newExecutor(t, cfg)
	if n := connections(e); n != 0 {
		t.Fatalf("%d connections before the first command: the dial is not lazy", n)
	}
	concurrently(t, e, 100)
	if n := connections(e); n != 1 {
		t.Fatalf("%d connections", n)
	}
}

// TestRefusedChannelsOpenConnections: with sshd's default MaxSessions
// (10), commands beyond it go to new connections, up to maxConnections,
// and then wait for a free channel.
func TestRefusedChannelsOpenConnections(t *testing.T) {
	t.Parallel()
	srv := sshtest.Start(t, sshtest.Options{})
	cfg := srv.Config(t)
	cfg.MaxConnections = 2
	cfg.Keepalive = loadKeepalive()
	e := newExecutor(t, cfg)
	concurrently(t, e, 30)
	if n := connections(e); n != 2 {
		t.Fatalf("%d connections, want 2", n)
	}
	e.pool.mu.Lock()
	for _, c := range e.pool.conns {
		if c.limit == 0 || c.limit > 10 {
			t.Errorf("learnt limit %d", c.limit)
		}
	}
	e.pool.mu.Unlock()
}

// loadKeepalive is the keep-alive interval of the tests that start tens
// of commands at once on few connections. On a loaded machine under
// -race, one sshd serving them all answers a keep-alive (and passes on a
// heartbeat) seconds late, past the 3 intervals of the 1 s that the loss
// tests need; these tests are about channels and connections, not about
// noticing a loss, so they use the default interval, scaled.
func loadKeepalive() time.Duration {
	return proctest.Scale(5 * time.Second)
}

// concurrently runs n commands at once (each waits until all started)
// and checks their output.
func concurrently(t *testing.T, e *Executor, n int) {
	t.Helper()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r, err := runIt(t, e, fmt.Sprintf("echo %d; sleep 0.3", i), 30000)
			if err != nil || r.Stdout.Text != fmt.Sprintf("%d\n", i) {
				t.Errorf("command %d: %+v %v", i, r, err)
			}
		})
	}
	wg.Wait()
}

func connections(e *Executor) int {
	e.pool.mu.Lock()
	defer e.pool.mu.Unlock()
	return len(e.pool.conns)
}

// TestSpillFilesOnTheRemoteHost: a stream that overflows is written to a
// file in a private directory under ssh.spillDir on the remote host
// (here the same machine), which RemoveSpills and Close remove.
func TestSpillFilesOnTheRemoteHost(t *testing.T) {
	t.Parallel()
	srv := sshtest.Start(t, sshtest.Options{})
	cfg := srv.Config(t)
	cfg.MaxOutputBytes = 100
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, e, "seq 1 1000; seq 1 500 >&2")
	for _, o := range []bash.Output{r.Stdout, r.Stderr} {
		info, err := os.Stat(o.SpillPath)
		if err != nil || info.Size() != o.TotalBytes || filepath.Dir(filepath.Dir(o.SpillPath)) != cfg.SpillDir {
			t.Fatalf("spill %q: %v %v", o.SpillPath, info, err)
		}
		if st, ok := info.Sys().(interface{ Uid() uint32 }); ok && st.Uid() != uint32(srv.UID) {
			t.Fatalf("spill owned by %d", st.Uid())
		}
	}
	e.RemoveSpills(r.Stdout.SpillPath, "/etc/passwd")
	if _, err := os.Stat(r.Stdout.SpillPath); !os.IsNotExist(err) {
		t.Fatal("RemoveSpills left the file")
	}
	if _, err := os.Stat("/etc/passwd"); err != nil {
		t.Fatal("RemoveSpills touched a file outside its directory")
	}
	dir := filepath.Dir(r.Stderr.SpillPath)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatal("Close left the remote spill directory")
	}
}

// TestUnwritableSpillWithholdsPath: a spill directory that cannot be made
// on the remote host withholds the path; the run is unaffected.
func TestUnwritableSpillWithholdsPath(t *testing.T) {
	t.Parallel()
	srv := sshtest.Start(t, sshtest.Options{})
	cfg := srv.Config(t)
	cfg.MaxOutputBytes, cfg.KeepHeadBytes = 10, new(int64(0))
	cfg.SpillDir = "/proc/dsh-no-such-dir"
	e := newExecutor(t, cfg)
	r := mustRun(t, e, "seq 1 100")
	if r.Stdout.SpillPath != "" || !r.Stdout.Truncated || r.Stdout.Text != "98\n99\n100\n" || executortest.ExitCode(r) != "0" {
		t.Fatalf("got %+v", r)
	}
}

// TestStartFrame: the start frame is found after whatever the remote
// user's rc files print, and only with this command's nonce.
func TestStartFrame(t *testing.T) {
	t.Parallel()
	const nonce = "dsh-0123456789abcdef"
	for _, tc := range []struct {
		buf  string
		f    frame
		rest string
		ok   bool
		err  bool
	}{
		{"\n" + nonce + " started 42\nhello", frame{pgid: 42}, "hello", true, false},
		{"welcome!\n" + nonce + " started 7\n", frame{pgid: 7}, "", true, false},
		{"no newline before" + "\n" + nonce + " started 9\nx\n", frame{pgid: 9}, "x\n", true, false},
		{"\n" + nonce + " workdir missing\n", frame{problem: "workdir missing"}, "", true, false},
		{"\n" + nonce + " start", frame{}, "", false, false},
		{"\ndsh-ffffffffffffffff started 3\n", frame{}, "", false, false},
		{"\n" + nonce + " started 1\n", frame{}, "", false, true},
		{strings.Repeat("x", maxPreamble+100), frame{}, "", false, true},
	} {
		f, rest, ok, err := startFrame([]byte(tc.buf), nonce)
		if f != tc.f || string(rest) != tc.rest || ok != tc.ok || (err != nil) != tc.err {
			t.Errorf("%.40q: %+v %q %v %v", tc.buf, f, rest, ok, err)
		}
	}
}

func TestQuoting(t *testing.T) {
	t.Parallel()
	if got := shellQuote(`it's "x" $y`); got != `'it'\''s "x" $y'` {
		t.Errorf("shellQuote: %s", got)
	}
	if got := string(escapeForPrintf([]byte("a\\b\x001"))); got != `a\\b\00001` {
		t.Errorf("escapeForPrintf: %s", got)
	}
}

// TestCheck: dsh doctor's report names the host, the user, the keys, the
// remote programs and bash's version, and times a round trip.
func TestCheck(t *testing.T) {
	t.Parallel()
	srv := sshtest.Start(t, sshtest.Options{})
	e := newExecutor(t, srv.Config(t))
	rep, err := e.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Host != fmt.Sprintf("127.0.0.1:%d", srv.Port) || rep.User != srv.User || len(rep.Missing) != 0 ||
		!strings.HasPrefix(rep.BashVersion, "5.") && !strings.HasPrefix(rep.BashVersion, "4.") ||
		rep.HostKey != "ssh-ed25519 "+gossh.FingerprintSHA256(srv.HostKey) ||
		rep.Key != "ssh-ed25519 "+gossh.FingerprintSHA256(srv.Signer.PublicKey())+" (identity file "+srv.Identity+")" ||
		rep.RoundTrip <= 0 || rep.Call <= 0 || rep.Programs["setsid"] == "" {
		t.Fatalf("report %+v", rep)
	}
}

// TestGiBStreamHeapBounded: a 1 GiB stream leaves dsh's live heap within
// 16 MiB of where it started, as for the local executor (the collectors
// keep their caps; the channel's window bounds what waits in memory).
func TestGiBStreamHeapBounded(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{})
	e := newExecutor(t, srv.Config(t))
	mustRun(t, e, "true") // the connection, before the first sample
	heap := executortest.StartHeapSampler()
	r := mustRun(t, e, "head -c 1073741824 /dev/zero")
	_, live := heap.Stop()
	if r.Stdout.TotalBytes != 1<<30 || !r.Stdout.SpillCapped || r.Stdout.SpillBytes != 64<<20 {
		t.Fatalf("stdout %+v", r.Stdout)
	}
	t.Logf("peak live heap %.1f MiB above the start, in %v", float64(live)/(1<<20), r.Duration)
	if live > 16<<20 {
		t.Fatalf("the live heap grew by %.1f MiB", float64(live)/(1<<20))
	}
}

// TestQuotedCommandOverTheArgumentLimit: a command under 64 KiB that
// quoting makes over the 128 KiB Linux allows a single argument (each '
// becomes 4 bytes in the one string the login shell gets) comes on stdin,
// like a longer command, and runs.
func TestQuotedCommandOverTheArgumentLimit(t *testing.T) {
	t.Parallel()
	srv := sshtest.Start(t, sshtest.Options{})
	e := newExecutor(t, srv.Config(t))
	cmd := "echo ok #" + strings.Repeat("'", 40000)
	if len(cmd) > maxArgCommand {
		t.Fatalf("the command is %d bytes, over maxArgCommand", len(cmd))
	}
	r, err := runIt(t, e, cmd, 0)
	if err != nil || r.Stdout.Text != "ok\n" || r.Stderr.Text != "" || executortest.ExitCode(r) != "0" {
		t.Fatalf("got %+v, %v", r, err)
	}
}

// TestInvocationLineBound: the exec request's line stays under the
// argument limit whatever the command, which comes on the line only when
// both are short enough.
func TestInvocationLineBound(t *testing.T) {
	t.Parallel()
	env := append(slices.Clone(fixedEnv), "Q="+strings.Repeat("'", 1000))
	for _, tc := range []struct {
		name    string
		command string
		inline  bool
	}{
		{"short", "echo hi", true},
		{"64 KiB of text", strings.Repeat("x", maxArgCommand), true},
		{"over 64 KiB", strings.Repeat("x", maxArgCommand+1), false},
		{"40000 quotes", "echo ok #" + strings.Repeat("'", 40000), false},
		{"30000 quotes", "echo ok #" + strings.Repeat("'", 30000), true},
	} {
		inv := invocationFor("dsh-0123456789abcdef", tc.command, "/w", nil, env, time.Second, time.Second)
		inline := strings.Contains(inv.line, shellQuote(tc.command))
		if len(inv.line) > maxArgLine || inline != tc.inline || (len(inv.payload) > 0) == tc.inline {
			t.Errorf("%s: line of %d bytes, inline %v, payload of %d bytes", tc.name, len(inv.line), inline, len(inv.payload))
		}
	}
}

// TestReservedEnvNames: env names that would overwrite the remote
// wrapper's own variables (BASH, the bash it execs; __dsh_*, its state,
// the command included) are refused, from env.set and from the request,
// before anything runs.
func TestReservedEnvNames(t *testing.T) {
	t.Parallel()
	srv := sshtest.Start(t, sshtest.Options{})
	e := newExecutor(t, srv.Config(t))
	marker := filepath.Join(srv.SharedDir(t), "ran")
	for _, env := range []map[string]string{
		{"__dsh_cmd": "echo INJECTED"},
		{"BASH": "/bin/echo"},
		{"__dsh_setsid": "/bin/true"},
		{"__dsh_": "x"},
	} {
		name := slices.Collect(maps.Keys(env))[0]
		spec, _ := e.Resolve(bash.Request{Command: "touch " + marker, Env: env})
		want := fmt.Sprintf("ssh: request env name %q is reserved: the remote wrapper uses it", name)
		if r, err := bash.Run(context.Background(), e, spec); err == nil || err.Error() != want {
			t.Errorf("env %v: got %+v, %v; want the error %q", env, r, err, want)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("env %v: the command ran", env)
		}

		cfg := srv.Config(t)
		cfg.Env.Set = env
		want = fmt.Sprintf("ssh: env.set name %q is reserved: the remote wrapper uses it", name)
		if _, err := New(cfg); err == nil || err.Error() != want {
			t.Errorf("env.set %v: err = %v, want %q", env, err, want)
		}
	}
	// Names that only look alike are the command's own.
	spec, _ := e.Resolve(bash.Request{Command: `echo "$BASHX $__dsh $_dsh_x"`, Env: map[string]string{"BASHX": "a", "__dsh": "b", "_dsh_x": "c"}})
	if r, err := bash.Run(context.Background(), e, spec); err != nil || r.Stdout.Text != "a b c\n" {
		t.Fatalf("got %+v, %v", r, err)
	}
}

// TestBlockedLogin: a remote login that never gets to the wrapper (rc
// files that block) cannot hold a call beyond its timeout, nor beyond its
// caller's cancellation, nor Close: the call ends, and what the login ran
// is killed with it.
func TestBlockedLogin(t *testing.T) {
	t.Parallel()
	srv := sshtest.Start(t, sshtest.Options{LoginScript: "sleep 60"})
	cfg := srv.Config(t)
	e := newExecutor(t, cfg)
	marker := filepath.Join(srv.SharedDir(t), "ran")
	blocked := func() bool { return len(srv.LoginProcesses()) > 0 }
	nothingLeft := func(what string) {
		t.Helper()
		if !proctest.Within(proctest.Wait, func() bool { return !blocked() }) {
			t.Fatalf("%s: the login's processes %v are still there", what, srv.LoginProcesses())
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("%s: the command ran", what)
		}
	}
	type outcome struct {
		r   bash.Result
		err error
	}

	// The timeout.
	spec, _ := e.Resolve(bash.Request{Command: "touch " + marker, TimeoutMs: new(500.0)})
	got := make(chan outcome, 1)
	begin := time.Now()
	go func() { r, err := bash.Run(context.Background(), e, spec); got <- outcome{r, err} }()
	if !proctest.Within(proctest.Wait, blocked) {
		t.Fatal("the login did not block")
	}
	var o outcome
	select {
	case o = <-got:
	case <-time.After(proctest.Wait):
		t.Fatal("the call outlived its timeout")
	}
	took := time.Since(begin)
	// The timeout, graceMs for a frame on its way, then the kill.
	bound := 500*time.Millisecond + 2*cfg.Grace + 2*drainSlack + slack
	t.Logf("timed out after %v (bound %v): %+v", took, bound, o.r)
	if o.err != nil || !o.r.TimedOut || o.r.Aborted || o.r.Timeout != 500*time.Millisecond || o.r.ExitCode != nil || took > bound {
		t.Fatalf("got %+v, %v after %v", o.r, o.err, took)
	}
	nothingLeft("timeout")

	// The caller's cancellation.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	spec, _ = e.Resolve(bash.Request{Command: "touch " + marker})
	go func() { r, err := bash.Run(ctx, e, spec); got <- outcome{r, err} }()
	if !proctest.Within(proctest.Wait, blocked) {
		t.Fatal("the login did not block")
	}
	cancel()
	select {
	case o = <-got:
	case <-time.After(proctest.Wait):
		t.Fatal("the cancelled call did not end")
	}
	if o.err != nil || !o.r.Aborted || o.r.TimedOut {
		t.Fatalf("cancelled: got %+v, %v", o.r, o.err)
	}
	nothingLeft("cancellation")

	// The caller's cancellation, during a background start.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	startErr := make(chan error, 1)
	go func() {
		p, err := e.Start(ctx, spec)
		if err == nil {
			err = fmt.Errorf("started %v", p)
		}
		startErr <- err
	}()
	if !proctest.Within(proctest.Wait, blocked) {
		t.Fatal("the login did not block")
	}
	cancel()
	select {
	case err := <-startErr:
		if err == nil || err.Error() != "aborted before spawn: aborted" {
			t.Fatalf("cancelled start: %v", err)
		}
	case <-time.After(proctest.Wait):
		t.Fatal("the cancelled start did not end")
	}
	nothingLeft("cancelled start")

	// Close, during a background start.
	e2, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan error, 1)
	go func() {
		spec, _ := e2.Resolve(bash.Request{Command: "touch " + marker})
		p, err := e2.Start(context.Background(), spec)
		if err == nil {
			err = fmt.Errorf("started %v", p)
		}
		started <- err
	}()
	if !proctest.Within(proctest.Wait, blocked) {
		t.Fatal("the login did not block")
	}
	closed := make(chan error, 1)
	go func() { closed <- e2.Close() }()
	select {
	case err = <-started:
	case <-time.After(proctest.Wait):
		t.Fatal("Close did not end a start held up by the login")
	}
	if err == nil || err.Error() != errClosed.Error() {
		t.Fatalf("Start: %v", err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	nothingLeft("Close")
}

// TestTerminalRefused: a spec with a terminal is refused by Start and
// RunOrYield before anything is dialed (the host cannot be).
func TestTerminalRefused(t *testing.T) {
	t.Parallel()
	kh := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(kh, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	e := newExecutor(t, config.SSH{Host: "dsh-no-such-host.invalid", KnownHosts: kh})
	spec, err := e.Resolve(bash.Request{Command: "true", TTY: &bash.Terminal{Cols: 80, Rows: 24}})
	if err != nil {
		t.Fatal(err)
	}
	const want = "ssh: interactive terminals are not supported by the SSH executor"
	if p, err := e.Start(t.Context(), spec); err == nil || err.Error() != want {
		t.Errorf("Start: %v, %v; want %q", p, err, want)
	}
	if _, p, err := e.RunOrYield(t.Context(), spec, nil); err == nil || err.Error() != want {
		t.Errorf("RunOrYield: %v, %v; want %q", p, err, want)
	}
}

package config

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseSSH(t *testing.T) {
	got, err := Parse([]byte(`
executor: ssh
ssh:
  host: dev@build1.internal:2222
  user: ops
  port: 2200
  identityFile: ~/.ssh/id_ed25519
  knownHosts: ~/.ssh/known_hosts
  cwd: /srv/work
  spillDir: /var/tmp
  maxConnections: 4
  keepaliveMs: 1000
  timeoutMs: 1000
  maxTimeoutMs: 2000
  maxOutputBytes: 100
  keepHeadBytes: 0
  maxSpillBytes: 1e6
  graceMs: 250
  env:
    set: {CI: 1, LANG: C.UTF-8}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := File{Executor: "ssh", SSH: SSH{
		Host: "dev@build1.internal:2222", User: "ops", Port: 2200,
		IdentityFile: "~/.ssh/id_ed25519", KnownHosts: "~/.ssh/known_hosts", Cwd: "/srv/work", SpillDir: "/var/tmp",
		MaxConnections: 4, Keepalive: time.Second, Timeout: time.Second, MaxTimeout: 2 * time.Second, MaxOutputBytes: 100,
		KeepHeadBytes: ptr[int64](0), MaxSpillBytes: 1e6, Grace: 250 * time.Millisecond,
		Env: SSHEnv{Set: map[string]string{"CI": "1", "LANG": "C.UTF-8"}},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestParseSSHErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, err string
	}{
		{"no host", "executor: ssh\n", "ssh.host must be set with executor: ssh (line 1)"},
		{"empty section", "executor: ssh\nssh: {}\n", "ssh.host must be set with executor: ssh (line 2)"},
		{"section without the executor", "ssh:\n  host: build1\n",
			"ssh: the executor is local: set executor: ssh to run commands over SSH (line 1)"},
		{"section with executor local", "executor: local\nssh: {keepaliveMs: 10}\n",
			"ssh: the executor is local: set executor: ssh to run commands over SSH (line 2)"},
		{"sandbox with executor ssh", "executor: ssh\nssh: {host: h}\nlocal:\n  sandbox:\n    mode: workspace-write\n",
			"local.sandbox: the executor is ssh, and the sandbox confines only commands of the local executor: remove the section (line 4)"},
		{"sandbox off with executor ssh", "executor: ssh\nssh: {host: h}\nlocal: {sandbox: {mode: off}}\n",
			"local.sandbox: the executor is ssh, and the sandbox confines only commands of the local executor: remove the section (line 3)"},
		{"unknown key", "executor: ssh\nssh: {host: h, hostname: h}\n", "ssh.hostname: unknown key (line 2); did you mean ssh.host?"},
		{"scrub is local only", "executor: ssh\nssh:\n  host: h\n  env: {scrub: [A]}\n", "ssh.env.scrub: the SSH executor forwards nothing of dsh's environment and does not scrub the remote one: only env.set applies (line 4)"},
		{"port zero", "executor: ssh\nssh: {host: h, port: 0}\n", "ssh.port must be a positive integer (line 2)"},
		{"port too large", "executor: ssh\nssh:\n  host: h\n  port: 70000\n", "ssh.port must be a port number from 1 to 65535 (line 4)"},
		{"port in host", "executor: ssh\nssh:\n  host: h:0\n", `ssh.host "h:0" is not a host: its port is not a number from 1 to 65535 (line 3)`},
		{"empty user", "executor: ssh\nssh:\n  host: '@h'\n", `ssh.host "@h" is not a host: the user before @ is empty (line 3)`},
		{"space", "executor: ssh\nssh:\n  host: 'a b'\n", `ssh.host "a b" is not a host: the host name is empty or holds a space, '/' or '@' (line 3)`},
		{"connections", "executor: ssh\nssh: {host: h, maxConnections: 1.5}\n", "ssh.maxConnections must be a positive integer (line 2)"},
		{"keepalive", "executor: ssh\nssh:\n  host: h\n  keepaliveMs: -1\n", "ssh.keepaliveMs must be a positive finite number (line 4)"},
		{"head", "executor: ssh\nssh:\n  host: h\n  maxOutputBytes: 10\n  keepHeadBytes: 10\n",
			"ssh.keepHeadBytes must be smaller than ssh.maxOutputBytes (line 5)"},
		{"env name", "executor: ssh\nssh:\n  host: h\n  env:\n    set: {A-B: 1}\n", `ssh.env.set name "A-B" is not a valid variable name (line 5)`},
		{"reserved env name", "executor: ssh\nssh:\n  host: h\n  env:\n    set: {__dsh_cmd: x}\n", `ssh.env.set name "__dsh_cmd" is reserved: the remote wrapper uses it (line 5)`},
		{"BASH", "executor: ssh\nssh:\n  host: h\n  env:\n    set:\n      A: 1\n      BASH: /bin/echo\n", `ssh.env.set name "BASH" is reserved: the remote wrapper uses it (line 5)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.yaml))
			if errText(err) != tc.err {
				t.Errorf("error = %q, want %q", errText(err), tc.err)
			}
			if !cmp.Equal(got, File{}) {
				t.Errorf("a refused file gave %+v", got)
			}
		})
	}
}

func TestSplitHost(t *testing.T) {
	for _, tc := range []struct {
		in, user, host string
		port           int
		err            bool
	}{
		{in: "build1", host: "build1"},
		{in: "dev@build1", user: "dev", host: "build1"},
		{in: "build1:2222", host: "build1", port: 2222},
		{in: "dev@build1.internal:22", user: "dev", host: "build1.internal", port: 22},
		{in: "127.0.0.1:2299", host: "127.0.0.1", port: 2299},
		{in: "[::1]:22", host: "::1", port: 22},
		{in: "[::1]", host: "::1"},
		{in: "::1", host: "::1"},
		{in: "u@[fe80::1]:2", user: "u", host: "fe80::1", port: 2},
		{in: "a@b@c", user: "a@b", host: "c"},
		{in: "", err: true},
		{in: "h:", err: true},
		{in: "h:x", err: true},
		{in: "h:65536", err: true},
		{in: "[::1", err: true},
		{in: "@h", err: true},
		{in: "a/b", err: true},
	} {
		user, host, port, err := SplitHost(tc.in)
		if (err != nil) != tc.err || user != tc.user || host != tc.host || port != tc.port {
			t.Errorf("SplitHost(%q) = %q, %q, %d, %v", tc.in, user, host, port, err)
		}
	}
}

func TestSSHWithDefaults(t *testing.T) {
	for _, tc := range []struct {
		name       string
		in         SSH
		user       string
		port       int
		head       int64
		keepalive  time.Duration
		connection int
	}{
		{"bare host", SSH{Host: "h"}, "", 22, 16000, 5 * time.Second, 8},
		{"user and port from host", SSH{Host: "dev@h:2222"}, "dev", 2222, 16000, 5 * time.Second, 8},
		{"keys win", SSH{Host: "dev@h:2222", User: "ops", Port: 2200, MaxOutputBytes: 100, Keepalive: 7 * time.Millisecond, MaxConnections: 1}, "ops", 2200, 25, 7 * time.Millisecond, 1},
	} {
		d := tc.in.WithDefaults()
		if d.User != tc.user || d.Port != tc.port || *d.KeepHeadBytes != tc.head || d.Keepalive != tc.keepalive || d.MaxConnections != tc.connection {
			t.Errorf("%s: %+v", tc.name, d)
		}
		if d.HostName() != "h" || d.Host != tc.in.Host {
			t.Errorf("%s: host %q, name %q", tc.name, d.Host, d.HostName())
		}
		if d.Grace != DefaultGrace || d.Timeout != DefaultTimeout || d.MaxSpillBytes != DefaultMaxSpillBytes {
			t.Errorf("%s: limits %+v", tc.name, d)
		}
		if dd := d.WithDefaults(); !cmp.Equal(d, dd) {
			t.Errorf("%s: not idempotent: %s", tc.name, cmp.Diff(d, dd))
		}
	}
	// Without executor ssh the section stays as it is (empty): a defaulted
	// local file must still validate.
	if f := (File{}).WithDefaults(); !f.SSH.isZero() || f.Validate() != nil {
		t.Errorf("a local file got an ssh section: %+v", f.SSH)
	}
}

// checkSSHDefaults checks a defaulted ssh section, for the fuzz test.
func checkSSHDefaults(t *testing.T, c SSH) {
	t.Helper()
	for _, n := range c.numeric() {
		if v := *n.v; v <= 0 {
			t.Errorf("WithDefaults: ssh.%s = %v", n.key, v)
		}
	}
	if c.Port < 1 || c.Port > 65535 || c.MaxConnections < 1 || c.Timeout > c.MaxTimeout {
		t.Errorf("WithDefaults: ssh %+v", c)
	}
}

// A File built in Go gets the same refusal of a sandbox with executor ssh
// (docs/spec.md §13), and an empty sandbox is no section.
func TestValidateSandboxWithSSH(t *testing.T) {
	f := File{Executor: ExecutorSSH, SSH: SSH{Host: "h"}, Local: Local{Sandbox: Sandbox{Mode: SandboxReadOnly}}}
	const want = "local.sandbox: the executor is ssh, and the sandbox confines only commands of the local executor: remove the section"
	if got := errText(f.Validate()); got != want {
		t.Errorf("Validate = %q, want %q", got, want)
	}
	f.Local.Sandbox = Sandbox{}
	if err := f.Validate(); err != nil {
		t.Errorf("without a sandbox: %v", err)
	}
	f = File{Local: Local{Sandbox: Sandbox{Mode: SandboxReadOnly}}}
	if err := f.Validate(); err != nil {
		t.Errorf("with the local executor: %v", err)
	}
}

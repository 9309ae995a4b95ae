package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseSandbox(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		name string
		doc  string
		want Sandbox
		err  string
	}{
		{name: "absent", doc: "{}"},
		{name: "every key", doc: `
sandbox:
  mode: workspace-write
  backend: bwrap
  writableRoots: [/var/cache/build, ~/go]
  network: true
  allowUnsandboxed: false
  allowSockets: [/run/user/1000/podman/podman.sock]
  protect: [.git, .claude/commands, build/]
  hide: [~/.ssh, /etc/secret]
  helper: /usr/local/bin/dsh-landlock
`, want: Sandbox{
			Mode: SandboxWorkspaceWrite, Backend: BackendBwrap, WritableRoots: []string{"/var/cache/build", "~/go"},
			Network: &Network{Host: true}, AllowUnsandboxed: &no, AllowSockets: []string{"/run/user/1000/podman/podman.sock"},
			Protect: []string{".git", ".claude/commands", "build/"}, Hide: []string{"~/.ssh", "/etc/secret"},
			Helper: "/usr/local/bin/dsh-landlock",
		}},
		// An empty list is kept: protect: [] means none, not the default.
		{name: "empty lists", doc: "sandbox: {mode: read-only, protect: [], hide: []}",
			want: Sandbox{Mode: SandboxReadOnly, Protect: []string{}, Hide: []string{}}},
		{name: "off", doc: "sandbox: {mode: off, allowUnsandboxed: true}", want: Sandbox{Mode: SandboxOff, AllowUnsandboxed: &yes}},

		{name: "unknown mode", doc: "sandbox:\n  mode: readonly",
			err: `local.sandbox.mode: "readonly" is not one of "auto", "off", "read-only" or "workspace-write" (line 3); did you mean "read-only"?`},
		{name: "auto", doc: "sandbox: {mode: auto}", want: Sandbox{Mode: SandboxAuto}},
		{name: "root writable", doc: "sandbox:\n  writableRoots: [/]",
			err: `local.sandbox.writableRoots entry "/" would make the whole filesystem writable: use mode: off instead (line 3)`},
		{name: "unknown backend", doc: "sandbox:\n  backend: firejail",
			err: `local.sandbox.backend: "firejail" is not one of "auto", "bwrap" or "landlock" (line 3)`},
		{name: "mode as bool", doc: "sandbox:\n  mode: false", err: `local.sandbox.mode must be a string (line 3)`},
		{name: "relative root", doc: "sandbox:\n  writableRoots: [build]",
			err: `local.sandbox.writableRoots entry "build" must be an absolute path or start with ~/ (line 3)`},
		{name: "bare tilde", doc: "sandbox:\n  hide: [\"~\"]",
			err: `local.sandbox.hide entry "~" must be an absolute path or start with ~/ (line 3)`},
		{name: "relative socket", doc: "sandbox:\n  allowSockets: [docker.sock]",
			err: `local.sandbox.allowSockets entry "docker.sock" must be an absolute path or start with ~/ (line 3)`},
		{name: "protect climbs out", doc: "sandbox:\n  protect: [../x]",
			err: `local.sandbox.protect entry "../x" must be a name inside a writable root, such as .git (line 3)`},
		{name: "protect absolute", doc: "sandbox:\n  protect: [/etc]",
			err: `local.sandbox.protect entry "/etc" must be a name inside a writable root, such as .git (line 3)`},
		{name: "relative helper", doc: "sandbox:\n  helper: dsh-landlock",
			err: `local.sandbox.helper "dsh-landlock" must be an absolute path (line 3)`},
		{name: "network not bool", doc: "sandbox:\n  network: off", err: `local.sandbox.network must be true, false or a map (line 3)`},
		{name: "unknown key", doc: "sandbox:\n  writeableRoots: []",
			err: `local.sandbox.writeableRoots: unknown key (line 3); did you mean local.sandbox.writableRoots?`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseLocal(tc.doc)
			if errText(err) != tc.err {
				t.Fatalf("error = %q, want %q", errText(err), tc.err)
			}
			if diff := cmp.Diff(tc.want, got.Sandbox); diff != "" {
				t.Errorf("sandbox (-want +got):\n%s", diff)
			}
			if err == nil {
				roundTripLocal(t, got)
			}
		})
	}
}

// TestSandboxAuto: a config file's sandbox is on by default (mode auto),
// except with executor ssh, whose section must stay empty; a Sandbox
// built in Go keeps an empty mode as off; auto resolves to workspace-write
// where a backend works, else off, and no other mode changes.
func TestSandboxAuto(t *testing.T) {
	if got := (File{}).WithDefaults().Local.Sandbox.Mode; got != SandboxAuto {
		t.Errorf("a File's default mode = %q, want auto", got)
	}
	if got := (File{Local: Local{Sandbox: Sandbox{Mode: SandboxOff}}}).WithDefaults().Local.Sandbox.Mode; got != SandboxOff {
		t.Errorf("mode off became %q", got)
	}
	ssh := File{Executor: ExecutorSSH, SSH: SSH{Host: "h"}}.WithDefaults()
	if !ssh.Local.Sandbox.IsZero() || ssh.Validate() != nil {
		t.Errorf("executor ssh: sandbox %+v, validate %v", ssh.Local.Sandbox, ssh.Validate())
	}
	if got := (Local{}).WithDefaults().Sandbox.Mode; got != SandboxOff {
		t.Errorf("a Local's default mode = %q, want off", got)
	}
	for _, tc := range []struct {
		mode      string
		available bool
		want      string
	}{
		{SandboxAuto, true, SandboxWorkspaceWrite}, {SandboxAuto, false, SandboxOff},
		{SandboxReadOnly, false, SandboxReadOnly}, {SandboxOff, true, SandboxOff}, {"", true, ""},
	} {
		if got := (Sandbox{Mode: tc.mode}).Resolved(tc.available).Mode; got != tc.want {
			t.Errorf("Resolved(%v) of mode %q = %q, want %q", tc.available, tc.mode, got, tc.want)
		}
	}
}

func TestSandboxDefaults(t *testing.T) {
	d := Sandbox{}.WithDefaults()
	if d.Mode != SandboxOff || d.Backend != BackendAuto || !d.Unsandboxed() || d.On() {
		t.Errorf("defaults = %+v", d)
	}
	if len(d.Protect) != 15 || len(d.Hide) != 24 {
		t.Errorf("default lists: %d protect, %d hide entries", len(d.Protect), len(d.Hide))
	}
	if err := d.Validate(); err != nil {
		t.Errorf("defaults do not validate: %v", err)
	}
	no := false
	if (Sandbox{AllowUnsandboxed: &no}).Unsandboxed() {
		t.Error("allowUnsandboxed: false still offers the escape")
	}
}

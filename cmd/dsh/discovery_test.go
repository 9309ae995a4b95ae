package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// discoveryEnv is an environment whose home and XDG config directory are
// the test's own, without $DSH_CONFIG.
func discoveryEnv(t *testing.T) (home, xdg string, env []string) {
	t.Helper()
	home, xdg = t.TempDir(), t.TempDir()
	return home, xdg, []string{"HOME=" + home, "XDG_CONFIG_HOME=" + xdg, "DSH_CONFIG="}
}

// writeConfigAt writes a config that loads the bash tool alone at path.
func writeConfigAt(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// bashOnly is a config whose effect dsh tools shows: no task tools.
const bashOnly = "tools: [bash]\n"

// toolsLoaded runs dsh tools and reports whether it listed the task tools
// (the defaults) and succeeded.
func toolsLoaded(t *testing.T, dir string, env []string, args ...string) (tasks bool) {
	t.Helper()
	got := dshIn(t, dir, env, append([]string{"tools"}, args...)...)
	if got.code != 0 || !strings.Contains(got.stdout, `"name": "bash"`) {
		t.Fatalf("dsh tools %q: status %d, stderr %q", args, got.code, got.stderr)
	}
	return strings.Contains(got.stdout, `"name": "task_output"`)
}

// doctorConfigLine is dsh doctor's config line.
func doctorConfigLine(t *testing.T, dir string, env []string) string {
	t.Helper()
	got := dshIn(t, dir, env, "doctor")
	for line := range strings.SplitSeq(got.stdout, "\n") {
		if strings.HasPrefix(line, "config: ") {
			return line
		}
	}
	t.Fatalf("dsh doctor: status %d, no config line in\n%s\nstderr %q", got.code, got.stdout, got.stderr)
	return ""
}

// TestConfigDiscovery: --config, else $DSH_CONFIG, else
// $XDG_CONFIG_HOME/dsh/config.yaml (~/.config/dsh/config.yaml when
// XDG_CONFIG_HOME is unset or relative), else the defaults; dsh doctor
// names the file and where its name came from (docs/spec.md §6.2).
func TestConfigDiscovery(t *testing.T) {
	t.Parallel()
	t.Run("xdg", func(t *testing.T) {
		t.Parallel()
		_, xdg, env := discoveryEnv(t)
		if !toolsLoaded(t, "", env) {
			t.Error("without a config file the task tools are not loaded")
		}
		if got, want := doctorConfigLine(t, "", env), "config: none (the defaults)"; got != want {
			t.Errorf("doctor: %q, want %q", got, want)
		}
		p := writeConfigAt(t, filepath.Join(xdg, "dsh", "config.yaml"), bashOnly)
		if toolsLoaded(t, "", env) {
			t.Errorf("%s was not read", p)
		}
		if got, want := doctorConfigLine(t, "", env), "config: "+p+" (from $XDG_CONFIG_HOME)"; got != want {
			t.Errorf("doctor: %q, want %q", got, want)
		}
	})
	t.Run("home", func(t *testing.T) {
		t.Parallel()
		for _, xdg := range []string{"", "relative/dir"} {
			home, _, env := discoveryEnv(t)
			env = append(env, "XDG_CONFIG_HOME="+xdg)
			p := writeConfigAt(t, filepath.Join(home, ".config", "dsh", "config.yaml"), bashOnly)
			if toolsLoaded(t, "", env) {
				t.Errorf("XDG_CONFIG_HOME=%q: %s was not read", xdg, p)
			}
			if got, want := doctorConfigLine(t, "", env), "config: "+p+" (from ~/.config)"; got != want {
				t.Errorf("XDG_CONFIG_HOME=%q: doctor: %q, want %q", xdg, got, want)
			}
		}
	})
	t.Run("env and flag", func(t *testing.T) {
		t.Parallel()
		_, xdg, env := discoveryEnv(t)
		writeConfigAt(t, filepath.Join(xdg, "dsh", "config.yaml"), "bogus: 1\n")
		named := writeConfigAt(t, filepath.Join(t.TempDir(), "named.yaml"), bashOnly)
		withEnv := append(env, "DSH_CONFIG="+named)
		if toolsLoaded(t, "", withEnv) {
			t.Errorf("$DSH_CONFIG=%s was not read", named)
		}
		if got, want := doctorConfigLine(t, "", withEnv), "config: "+named+" (from $DSH_CONFIG)"; got != want {
			t.Errorf("doctor: %q, want %q", got, want)
		}
		flagged := writeConfigAt(t, filepath.Join(t.TempDir(), "flag.yaml"), "tools: [bash, tasks]\n")
		if !toolsLoaded(t, "", withEnv, "--config", flagged) {
			t.Error("--config does not win over $DSH_CONFIG")
		}
		if !toolsLoaded(t, "", withEnv, "--config", "") {
			t.Error("--config '' does not give the defaults")
		}
	})
	t.Run("missing DSH_CONFIG", func(t *testing.T) {
		t.Parallel()
		_, _, env := discoveryEnv(t)
		missing := filepath.Join(t.TempDir(), "nope.yaml")
		want := "dsh: config file " + missing + " (from $DSH_CONFIG): no such file or directory\n"
		for _, args := range [][]string{{"tools"}, {"doctor"}, {"mcp"}, {"run", "--", "true"}, {"policy", "check", "--", "true"}, {"serve", "--addr", "127.0.0.1:0", "--no-auth"}} {
			got := dsh(t, append(env, "DSH_CONFIG="+missing), args...)
			if got.code != exitUsage || got.stderr != want {
				t.Errorf("dsh %q: status %d, stderr %q; want 2, %q", args, got.code, got.stderr, want)
			}
		}
	})
}

// TestConfigNeverFromTheWorkdir: a config file in the working directory
// or a project's dot directory configures nothing: a cloned repository
// must not configure dsh.
func TestConfigNeverFromTheWorkdir(t *testing.T) {
	t.Parallel()
	_, _, env := discoveryEnv(t)
	project := t.TempDir()
	for _, name := range []string{"config.yaml", "dsh.yaml", ".dsh.yaml", ".dsh/config.yaml", ".config/dsh/config.yaml", "dsh/config.yaml"} {
		writeConfigAt(t, filepath.Join(project, name), bashOnly)
	}
	if !toolsLoaded(t, project, append(env, "PWD="+project)) {
		t.Error("a config file in the working directory was read")
	}
	if got, want := doctorConfigLine(t, project, env), "config: none (the defaults)"; got != want {
		t.Errorf("doctor in the project: %q, want %q", got, want)
	}
	// A home that is the working directory (a service whose state
	// directory is both): its ~/.config is the workdir's, which commands
	// write. It is not read, and dsh says so.
	home := []string{"HOME=" + project, "XDG_CONFIG_HOME=", "DSH_CONFIG="}
	p := filepath.Join(project, ".config", "dsh", "config.yaml")
	want := "dsh: not reading " + p + " (from ~/.config): it is inside the working directory " + project + ", where commands can write; give --config to use it\n"
	got := dshIn(t, project, home, "tools")
	if got.code != 0 || !strings.Contains(got.stdout, `"name": "task_output"`) || got.stderr != want {
		t.Errorf("home in the workdir: status %d, task tools %v, stderr %q; want %q",
			got.code, strings.Contains(got.stdout, `"name": "task_output"`), got.stderr, want)
	}
	if got := dshIn(t, "", home, "policy", "check", "--workdir", project, "--", "true"); got.stderr != want {
		t.Errorf("policy check --workdir: stderr %q", got.stderr)
	}
	if toolsLoaded(t, project, home, "--config", p) {
		t.Error("--config naming the file in the workdir was not read")
	}
}

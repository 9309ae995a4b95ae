package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestBuildFactsString(t *testing.T) {
	base := buildFacts{version: develVersion, goVersion: "go1.26.0", platform: "linux/amd64"}
	settings := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	rev := "022d77e1f3c4a5b6c7d8e9f0a1b2c3d4e5f6a7b8"
	for _, tc := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"release", debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}, Settings: settings("vcs.revision", rev, "vcs.time", "2026-12-03T13:00:00Z", "vcs.modified", "false")},
			"dsh v0.3.0 (commit 022d77e1f3c4, 2026-12-03T13:00:00Z) go1.26.0 linux/amd64"},
		{"dirty checkout", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: settings("vcs.revision", rev, "vcs.time", "2026-12-03T13:00:00Z", "vcs.modified", "true")},
			"dsh (devel) (commit 022d77e1f3c4+dirty, 2026-12-03T13:00:00Z) go1.26.0 linux/amd64"},
		{"no vcs", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}},
			"dsh (devel) (commit unknown: built without version control information) go1.26.0 linux/amd64"},
		{"no version at all", debug.BuildInfo{},
			"dsh (devel) (commit unknown: built without version control information) go1.26.0 linux/amd64"},
	} {
		if got := factsFrom(&tc.bi, base).String(); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// TestVersionOfACheckoutBuild builds dsh in a git checkout of this tree,
// clean and then with a change, and checks that dsh version, dsh
// --version and dsh doctor name the checkout's commit, its date, and the
// change. (Go stamps no vcs.* into a build of a git worktree, whose .git
// is a file, so the test makes a checkout of its own.)
func TestVersionOfACheckoutBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds dsh twice")
	}
	repo := checkoutOfThisTree(t)
	bin := filepath.Join(t.TempDir(), "dsh")
	build := func() {
		t.Helper()
		cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=true", "-o", bin, "./cmd/dsh")
		// Static, as scripts/release.sh builds: what ships, and the
		// packages it compiled (CI's release dry run) come from the
		// build cache instead of being compiled again with cgo.
		cmd.Dir, cmd.Env = repo, append(os.Environ(), "GOFLAGS=", "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(bin, args...).Output()
		if err != nil {
			t.Fatalf("dsh %v: %v", args, err)
		}
		return string(out)
	}
	head := strings.TrimSpace(git(t, repo, "rev-parse", "HEAD"))
	date := strings.TrimSpace(git(t, repo, "show", "-s", "--format=%cd", "--date=format-local:%Y-%m-%dT%H:%M:%SZ", "HEAD"))
	build()
	line := run("version")
	// Go gives a checkout build a pseudo-version naming the commit.
	want := "(commit " + head[:12] + ", " + date + ") " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	if !strings.HasPrefix(line, "dsh v0.0.0-") || !strings.HasSuffix(line, want) || strings.Contains(line, "devel") {
		t.Errorf("dsh version of a clean checkout = %q, want dsh v0.0.0-… %q", line, want)
	}
	if got := run("--version"); got != line {
		t.Errorf("dsh --version = %q, want what dsh version prints, %q", got, line)
	}
	if doc := strings.SplitN(run("doctor"), "\n", 3); len(doc) < 3 || doc[1]+"\n" != "version: "+line {
		t.Errorf("dsh doctor's second line is not version: %q: %q", line, doc)
	}

	f, err := os.OpenFile(filepath.Join(repo, "cmd", "dsh", "version.go"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\n// a local change\n")
	f.Close()
	build()
	if line := run("version"); !strings.Contains(line, "(commit "+head[:12]+"+dirty, "+date+")") {
		t.Errorf("dsh version of a changed checkout = %q, want commit %s+dirty", line, head[:12])
	}
}

// checkoutOfThisTree copies the module's files (tracked, and untracked ones
// git does not ignore) into a fresh git repository with one commit.
func checkoutOfThisTree(t *testing.T) string {
	t.Helper()
	top := strings.TrimSpace(git(t, ".", "rev-parse", "--show-toplevel"))
	repo := t.TempDir()
	for _, rel := range strings.Split(strings.TrimSpace(git(t, top, "ls-files", "-co", "--exclude-standard")), "\n") {
		src := filepath.Join(top, rel)
		fi, err := os.Lstat(src)
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the tree, or a symlink
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(repo, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	git(t, repo, "init", "-q")
	git(t, repo, "add", "-A")
	git(t, repo, "-c", "user.name=test", "-c", "user.email=test@example.com", "commit", "-q", "--no-verify", "-m", "the tree under test")
	return repo
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TZ=UTC", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

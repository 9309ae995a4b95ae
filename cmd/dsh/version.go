package main

// dsh version and dsh --version: what the binary was built from.

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// The release's version, commit, commit time and whether the tree had
// changes, set by scripts/release.sh with -ldflags "-X main.version=vX.Y.Z
// -X main.commit=… -X main.commitTime=… -X main.modified=false" (a build
// from a git worktree has no vcs.* build info). Empty for other builds,
// which take all of them from the build info.
var version, commit, commitTime, modified string

// develVersion is the version of a build from a checkout that Go gave no
// version: `go build` with -buildvcs=false, or outside a git checkout.
const develVersion = "(devel)"

// buildFacts are what the binary knows about its own build.
type buildFacts struct {
	version   string // vX.Y.Z, a pseudo-version, or "(devel)"
	revision  string // the full commit hash; "" when unknown
	time      string // the commit's time, RFC 3339; "" when unknown
	modified  bool   // the tree had uncommitted changes
	goVersion string
	platform  string // GOOS/GOARCH
}

// readBuildFacts reads the build info Go stamps into every binary: the
// main module's version (the tag for `go install …@vX.Y.Z`, a
// pseudo-version for a build in a git checkout) and the vcs.* settings.
func readBuildFacts() buildFacts {
	f := buildFacts{version: develVersion, goVersion: runtime.Version(), platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if ok {
		f = factsFrom(bi, f)
	}
	return f.stamped()
}

// stamped is f with what the release script stamped in.
func (f buildFacts) stamped() buildFacts {
	if version != "" {
		f.version = version
	}
	if commit != "" {
		f.revision, f.time, f.modified = commit, commitTime, modified == "true"
	}
	return f
}

// factsFrom fills f from bi.
func factsFrom(bi *debug.BuildInfo, f buildFacts) buildFacts {
	if v := bi.Main.Version; v != "" {
		f.version = v
	}
	if bi.GoVersion != "" {
		f.goVersion = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			f.revision = s.Value
		case "vcs.time":
			f.time = s.Value
		case "vcs.modified":
			f.modified = s.Value == "true"
		}
	}
	return f
}

// String is the line dsh version prints:
//
//	dsh v0.3.0 (commit 022d77e1f3c4, 2026-12-03T13:00:00Z) go1.26.0 linux/amd64
//	dsh (devel) (commit 022d77e1f3c4+dirty, 2026-12-03T13:00:00Z) go1.26.0 linux/amd64
//	dsh (devel) (commit unknown: built without version control information) go1.26.0 linux/amd64
//
// The date is the commit's (vcs.time), not the build's: the same commit
// always builds the same binary.
func (f buildFacts) String() string {
	commit := "commit unknown: built without version control information"
	if f.revision != "" {
		rev := f.revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if f.modified {
			rev += "+dirty"
		}
		commit = "commit " + rev
		if f.time != "" {
			commit += ", " + f.time
		}
	}
	return fmt.Sprintf("dsh %s (%s) %s %s", f.version, commit, f.goVersion, f.platform)
}

// buildVersion is the version alone, as the MCP server reports it in its
// serverInfo.
func buildVersion() string { return readBuildFacts().version }

func newVersionCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print dsh's version, commit and commit date, and the Go it was built with",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintln(s.out, readBuildFacts())
			return nil
		},
	}
}

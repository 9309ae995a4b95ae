package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dsh-go/dsh/config"
)

// Config discovery (docs/spec.md §6.2): --config, else $DSH_CONFIG, else
// $XDG_CONFIG_HOME/dsh/config.yaml ($HOME/.config/dsh/config.yaml when
// XDG_CONFIG_HOME is unset or not absolute), else none: the defaults.
// Never a file of the working directory or of a project: a cloned
// repository must not configure dsh.
const (
	configEnv = "DSH_CONFIG"
	// configFlagHelp is every --config flag's help (exact, one place).
	configFlagHelp = "config file (YAML; default: $DSH_CONFIG, else $XDG_CONFIG_HOME/dsh/config.yaml)"
	// The origins doctor names (exact).
	fromFlag    = "--config"
	fromEnv     = "$" + configEnv
	fromXDG     = "$XDG_CONFIG_HOME"
	fromHome    = "~/.config"
	noneText    = "none (the defaults)"
	fromFlagKey = "dsh-config-from" // the flag annotation that keeps the origin
)

// configSource is the config file a command uses and where its name came
// from; Path is "" when there is none.
type configSource struct{ Path, From string }

// String is doctor's config line (exact): "<path> (from <origin>)", or
// "none (the defaults)".
func (c configSource) String() string {
	if c.Path == "" {
		return noneText
	}
	return c.Path + " (from " + c.From + ")"
}

// discoverConfig finds the config file: flag when set, else the
// environment's or the user's. A $DSH_CONFIG that names no file is an
// error (it was asked for); a missing XDG file is no config.
func discoverConfig(flag string, flagSet bool) (configSource, error) {
	if flagSet {
		return configSource{Path: flag, From: fromFlag}, nil
	}
	if p := os.Getenv(configEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return configSource{}, usageError("config file %s (from %s): %v", p, fromEnv, pathErr(err))
		}
		return configSource{Path: p, From: fromEnv}, nil
	}
	dir, from := os.Getenv("XDG_CONFIG_HOME"), fromXDG
	if !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil || !filepath.IsAbs(home) {
			return configSource{}, nil
		}
		dir, from = filepath.Join(home, ".config"), fromHome
	}
	p := filepath.Join(dir, "dsh", "config.yaml")
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return configSource{}, nil
	}
	return configSource{Path: p, From: from}, nil
}

// insideWorkdir is the text (exact) of a discovered config file that is
// not read: it lies in the working directory, where the commands dsh runs
// (sandboxed ones included) could have written it for the next start.
const insideWorkdir = "dsh: not reading %s (from %s): it is inside the working directory %s, where commands can write; give --config to use it\n"

// withinWorkdir reports whether the discovered file p lies in the
// command's working directory (--workdir, else the current one), symlinks
// resolved.
func withinWorkdir(cmd *cobra.Command, p string) (string, bool) {
	wd := ""
	if fl := cmd.Flags().Lookup("workdir"); fl != nil {
		wd = fl.Value.String()
	}
	if wd == "" {
		wd, _ = os.Getwd()
	}
	if wd == "" {
		return "", false
	}
	real := func(x string) string {
		abs, err := filepath.Abs(x)
		if err != nil {
			return x
		}
		if r, err := filepath.EvalSymlinks(abs); err == nil {
			return r
		}
		return abs
	}
	rel, err := filepath.Rel(real(wd), real(p))
	return wd, err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// resolveConfigFlag runs before every command: one that has --config gets
// the discovered file in it when the flag was not given, so each reads
// and passes on (to the sandbox, local.WithConfigFile) the same path;
// the origin stays in the flag for doctor (configSourceOf).
func resolveConfigFlag(cmd *cobra.Command) error {
	fl := cmd.Flags().Lookup("config")
	if fl == nil {
		return nil
	}
	src, err := discoverConfig(fl.Value.String(), fl.Changed)
	if err != nil {
		return err
	}
	if src.From == fromXDG || src.From == fromHome {
		if wd, in := withinWorkdir(cmd, src.Path); in {
			fmt.Fprintf(cmd.ErrOrStderr(), insideWorkdir, src.Path, src.From, wd)
			src = configSource{}
		}
	}
	if err := fl.Value.Set(src.Path); err != nil {
		return err
	}
	if fl.Annotations == nil {
		fl.Annotations = map[string][]string{}
	}
	fl.Annotations[fromFlagKey] = []string{src.From}
	return nil
}

// configSourceOf is the config file cmd uses and its origin.
func configSourceOf(cmd *cobra.Command) configSource {
	fl := cmd.Flags().Lookup("config")
	if fl == nil || fl.Value.String() == "" {
		return configSource{}
	}
	return configSource{Path: fl.Value.String(), From: strings.Join(fl.Annotations[fromFlagKey], "")}
}

// loadConfig reads the config file at path ("" means no file: the
// defaults) and returns it with its defaults applied. The error is one
// line that names the file; config.Parse names the key and its line.
func loadConfig(path string) (config.File, error) {
	if path == "" {
		return config.File{}.WithDefaults(), nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return config.File{}, fmt.Errorf("config file %s: %w", path, pathErr(err))
	}
	f, err := config.Parse(data)
	if err != nil {
		return config.File{}, fmt.Errorf("config file %s: %w", path, err)
	}
	return f.WithDefaults(), nil
}

// oneLine flattens a message onto one line (yaml's multi-error texts have
// several).
func oneLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return strings.Join(lines, " ")
}

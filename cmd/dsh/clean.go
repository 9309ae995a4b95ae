package main

// dsh clean: the removal of the spill files dsh run keeps (docs/spec.md
// §6.1).

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/dsh-go/dsh/bash/capture"
	"github.com/dsh-go/dsh/config"
)

func init() {
	extraCommands = append(extraCommands, newCleanCmd)
}

func newCleanCmd(s streams) *cobra.Command {
	return configCommand("clean", "Remove the spill files dsh run kept, and say how much was removed", s, func(cfg config.File, _ configSource, _ *slog.Logger) error {
		dir := runSpillDir(cfg.Local.SpillDir)
		removed, err := cleanRunSpills(dir)
		if err != nil {
			return err
		}
		fmt.Fprintln(s.out, cleanedText(removed, dir))
		return nil
	})
}

// cleanRunSpills removes the spill directories of dsh runs that have ended
// from dir, dsh run's spill base: only when dir is a real directory of
// this user's that no one else can enter (nothing to do when there is
// none), and only the spill directories in it (capture.RemoveFinished).
func cleanRunSpills(dir string) (capture.Removed, error) {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return capture.Removed{}, nil
	case err != nil:
		return capture.Removed{}, failure("clean: %s: %v", dir, pathErr(err))
	case !privateDir(fi):
		return capture.Removed{}, failure("clean: %s: %s; nothing removed", dir, notPrivateDir)
	}
	removed, err := capture.RemoveFinished(dir)
	if err != nil {
		return removed, failure("clean: %s after removing %s: %v", dir, cleanedAmount(removed), err)
	}
	return removed, nil
}

// cleanedText is what dsh clean prints (exact, docs/spec.md §6.1):
// "removed 2 spill files (4096 bytes) from /tmp/dsh-run-1000".
func cleanedText(r capture.Removed, dir string) string {
	return "removed " + cleanedAmount(r) + " from " + dir
}

// cleanedAmount is "2 spill files (4096 bytes)", "1 spill file (10 bytes)".
func cleanedAmount(r capture.Removed) string {
	files := " spill files"
	if r.Files == 1 {
		files = " spill file"
	}
	return strconv.Itoa(r.Files) + files + " (" + strconv.FormatInt(r.Bytes, 10) + " bytes)"
}

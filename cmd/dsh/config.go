package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/dsh-go/dsh/config"
)

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

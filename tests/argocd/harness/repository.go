// Package harness runs krc's Argo CD plugin through Argo CD's own code (v3.5.1): the cmp server the sidecar runs,
// the repo-server's manifest generation, the ApplicationSet generators, the health checks and gitops-engine's
// sync helpers. The tests in this package are the harness; these files are what they share.
package harness

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Repository is a Git checkout holding a krc project, as the repo-server has one: the working tree at a commit,
// .git included (the repo-server sends the whole checkout to the plugin).
type Repository struct {
	Root     string
	Revision string
}

// Checkout is the krc checkout this harness belongs to (three folders up from tests/argocd/harness).
func Checkout() (string, error) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(root, "pyproject.toml")); err != nil {
		return "", fmt.Errorf("no krc checkout at %s: %w", root, err)
	}
	return root, nil
}

// checkoutFiles lists what a commit of the checkout's working tree would hold: tracked files that still exist
// and untracked ones Git does not ignore (so rendered/, .venv/ and vendor/charts/ stay out, as in a clone).
func checkoutFiles(checkout string) ([]string, error) {
	out, err := runCommand(checkout, nil, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if err != nil {
		return nil, fmt.Errorf("in %s: %w", checkout, err)
	}
	var files []string
	for _, name := range strings.Split(string(out), "\x00") {
		if name == "" {
			continue
		}
		if _, err := os.Lstat(filepath.Join(checkout, name)); err == nil {
			files = append(files, name)
		}
	}
	return files, nil
}

// Edit changes a repository's files before they are committed: it gets the folder being built.
type Edit func(root string) error

// NewRepository makes a Git repository at dst from the checkout's files, applies edits, and commits the result.
func NewRepository(dst, checkout string, edits ...Edit) (Repository, error) {
	files, err := checkoutFiles(checkout)
	if err != nil {
		return Repository{}, err
	}
	for _, name := range files {
		if err := copyPath(filepath.Join(checkout, name), filepath.Join(dst, name)); err != nil {
			return Repository{}, err
		}
	}
	for _, edit := range edits {
		if err := edit(dst); err != nil {
			return Repository{}, err
		}
	}
	// a fixed identity and date: the same files give the same commit
	env := append(os.Environ(), "GIT_AUTHOR_NAME=krc harness", "GIT_AUTHOR_EMAIL=harness@krc.invalid",
		"GIT_COMMITTER_NAME=krc harness", "GIT_COMMITTER_EMAIL=harness@krc.invalid",
		"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z")
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "-A"},
		{"-c", "commit.gpgsign=false", "commit", "-q", "-m", "krc project"},
	} {
		if _, err := runCommand(dst, env, "git", args...); err != nil {
			return Repository{}, err
		}
	}
	out, err := runCommand(dst, nil, "git", "rev-parse", "HEAD")
	if err != nil {
		return Repository{}, err
	}
	return Repository{Root: dst, Revision: strings.TrimSpace(string(out))}, nil
}

// ReplaceFolders replaces folders of the project with those of another project (the tests' fixture project
// holds only environments/ and golden/).
func ReplaceFolders(from string, names ...string) Edit {
	return func(root string) error {
		for _, name := range names {
			if err := os.RemoveAll(filepath.Join(root, name)); err != nil {
				return err
			}
			if err := copyTree(filepath.Join(from, name), filepath.Join(root, name)); err != nil {
				return err
			}
		}
		return nil
	}
}

// AppendToFile adds text at the end of a file of the project.
func AppendToFile(name, text string) Edit {
	return func(root string) error {
		f, err := os.OpenFile(filepath.Join(root, name), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		_, err = f.WriteString(text)
		return errors.Join(err, f.Close())
	}
}

// ReplaceInFile replaces the one occurrence of old in a file of the project.
func ReplaceInFile(name, old, replacement string) Edit {
	return func(root string) error {
		path := filepath.Join(root, name)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Count(data, []byte(old)) != 1 {
			return fmt.Errorf("%s: %q is not there exactly once", name, old)
		}
		return os.WriteFile(path, bytes.Replace(data, []byte(old), []byte(replacement), 1), 0o644)
	}
}

func copyTree(src, dst string) error {
	return filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		return copyPath(path, filepath.Join(dst, rel))
	})
}

func copyPath(src, dst string) error {
	info, err := os.Lstat(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if info.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, info.Mode().Perm())
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Close())
}

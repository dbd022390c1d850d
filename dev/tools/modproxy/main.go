// Command modproxy writes a Go module proxy into a folder (GOPROXY=file://…)
// from the modules of a git clone at one version, as a module proxy would
// serve them after the version's tags were pushed: for each module folder,
// <path>/@v/list, <version>.info, <version>.mod and <version>.zip, the zip
// made by golang.org/x/mod/zip from the files git has at the module's tag
// (`vX.Y.Z` for the root, `<folder>/vX.Y.Z` for a nested module), nested
// modules' folders left out.
//
//	modproxy -repo CLONE -out DIR -version vX.Y.Z [-rev REV] FOLDER...
//
// With -rev, every folder is read at that revision instead of its tag (make
// release tidies each module against the ones it requires before tagging).
// make release and make release-check use it (dev/release/).
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	"golang.org/x/mod/zip"
)

func main() {
	repo := flag.String("repo", ".", "the git clone (a clone, not a worktree: its .git must be a folder)")
	out := flag.String("out", "", "the proxy folder to write (created if missing)")
	version := flag.String("version", "", "the version to serve, vX.Y.Z")
	rev := flag.String("rev", "", "read every folder at this revision instead of its tag")
	flag.Parse()
	if *out == "" || *version == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: modproxy -repo CLONE -out DIR -version vX.Y.Z [-rev REV] FOLDER...")
		os.Exit(2)
	}
	root, err := filepath.Abs(*repo)
	if err == nil {
		err = run(root, *out, *version, *rev, flag.Args())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "modproxy:", err)
		os.Exit(1)
	}
}

func run(repo, out, version, rev string, folders []string) error {
	if !semver.IsValid(version) || semver.Canonical(version) != version || semver.Build(version) != "" {
		return fmt.Errorf("version %q is not a canonical semantic version (vX.Y.Z or vX.Y.Z-pre)", version)
	}
	rootPath, err := modulePath(repo, revFor(rev, ".", version), ".")
	if err != nil {
		return err
	}
	for _, folder := range folders {
		folder = path.Clean(filepath.ToSlash(folder))
		r := revFor(rev, folder, version)
		p, err := modulePath(repo, r, folder)
		if err != nil {
			return err
		}
		// A nested module's tags carry its folder as prefix only if its path is
		// the root's path plus that folder (the go command derives one from the other).
		if want := path.Join(rootPath, folder); folder != "." && p != want {
			return fmt.Errorf("%s/go.mod: module %s, want %s (its tags would not be found)", folder, p, want)
		}
		if err := write(repo, out, module.Version{Path: p, Version: version}, r, folder); err != nil {
			return err
		}
		fmt.Printf("modproxy: %s@%s from %s\n", p, version, r)
	}
	return nil
}

// revFor is the revision a folder's module is read at: rev, or the module's tag.
func revFor(rev, folder, version string) string {
	switch {
	case rev != "":
		return rev
	case folder == ".":
		return "refs/tags/" + version
	default:
		return "refs/tags/" + folder + "/" + version
	}
}

func git(repo string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = repo
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return b, nil
}

func goMod(repo, rev, folder string) ([]byte, error) {
	return git(repo, "show", rev+":"+path.Join(folder, "go.mod"))
}

func modulePath(repo, rev, folder string) (string, error) {
	b, err := goMod(repo, rev, folder)
	if err != nil {
		return "", err
	}
	p := modfile.ModulePath(b)
	if p == "" {
		return "", fmt.Errorf("%s/go.mod at %s: no module line", folder, rev)
	}
	return p, nil
}

func write(repo, out string, m module.Version, rev, folder string) error {
	esc, err := module.EscapePath(m.Path)
	if err != nil {
		return err
	}
	dir := filepath.Join(out, filepath.FromSlash(esc), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	commit, err := git(repo, "rev-parse", "--verify", rev+"^{commit}")
	if err != nil {
		return err
	}
	when, err := git(repo, "log", "-1", "--format=%cI", strings.TrimSpace(string(commit)))
	if err != nil {
		return err
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(string(when)))
	if err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{m.Version, t.UTC()})
	if err != nil {
		return err
	}
	mod, err := goMod(repo, rev, folder)
	if err != nil {
		return err
	}
	base := filepath.Join(dir, m.Version)
	if err := os.WriteFile(base+".info", info, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(base+".mod", mod, 0o644); err != nil {
		return err
	}
	var buf bytes.Buffer
	subdir := folder
	if subdir == "." {
		subdir = ""
	}
	if err := zip.CreateFromVCS(&buf, m, repo, rev, subdir); err != nil {
		var vcs *zip.UnrecognizedVCSError
		if errors.As(err, &vcs) {
			return fmt.Errorf("%s is not a git clone with a .git folder (a worktree cannot be read by golang.org/x/mod/zip): %w", repo, err)
		}
		return err
	}
	if err := os.WriteFile(base+".zip", buf.Bytes(), 0o644); err != nil {
		return err
	}
	return addToList(filepath.Join(dir, "list"), m.Version)
}

// addToList adds version to a proxy's list file, once.
func addToList(file, version string) error {
	b, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	versions := strings.Fields(string(b))
	if !slices.Contains(versions, version) {
		versions = append(versions, version)
	}
	semver.Sort(versions)
	return os.WriteFile(file, []byte(strings.Join(versions, "\n")+"\n"), 0o644)
}
